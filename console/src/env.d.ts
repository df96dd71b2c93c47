/** The style sheet main.tsx imports: esbuild emits it as main-[hash].css beside the script. */
declare module '*.css';
