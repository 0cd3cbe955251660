/**
 * libbzip2-wasm: the reference bzip2 (libbzip2) compiled to WebAssembly, as CyberChef uses it. It ships
 * no types; this is the part the guest's bzip2 programs use.
 */
declare module 'libbzip2-wasm' {
  /** The outcome of one call: `error` is libbzip2's code (0: done; -5: not bzip2; -4, -7: corrupt or cut short). */
  export interface Bzip2Result {
    error: number;
    output: Uint8Array;
  }
  /** The module's two calls. */
  export interface Bzip2 {
    compressBZ2(input: Uint8Array, blockSize: number, workFactor: number): Bzip2Result;
    decompressBZ2(input: Uint8Array, small: number): Bzip2Result;
  }
  /** The instantiated module: its `then` is emscripten's, not a promise's, and hands back the module. */
  export interface Bzip2Module extends Bzip2 {
    then?: (ready: (module: Bzip2Module) => void) => void;
  }
  /** Instantiates the module. */
  export default function libbzip2(): Bzip2Module;
}

/** unix-crypt-td-js: the DES-based crypt(3); ships no types. */
declare module 'unix-crypt-td-js' {
  /** The 13-character DES crypt of the password with a two-character salt. */
  export default function unixCrypt(password: string, salt: string): string;
}
