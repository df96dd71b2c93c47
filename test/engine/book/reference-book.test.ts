import { checkBook } from '../../../src/engine/book/invariants.ts';
import { createReferenceBook } from '../../../src/engine/book/reference-book.ts';
import { bookSuite } from './suite.ts';

// checkBook's contract half (not crossed, depth agrees with orders(), mirroring) applies to any book.
bookSuite('reference book', createReferenceBook, checkBook);
