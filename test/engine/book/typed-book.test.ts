import { createBook } from '../../../src/engine/book/book.ts';
import { checkBook } from '../../../src/engine/book/invariants.ts';
import { bookSuite } from './suite.ts';

bookSuite('typed book', createBook, checkBook);
