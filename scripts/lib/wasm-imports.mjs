// Minimal reader of a WebAssembly binary's import and export sections (no dependencies).
//
// Used by scripts/test.mjs to prove that the core is sans-IO on wasm32: the module built from it
// must import nothing from the host. Reusable:
//
//   import { readWasmInterface } from './lib/wasm-imports.mjs';
//   const { imports, exports } = readWasmInterface(bytes);   // bytes: Uint8Array
//
// Or from a shell: `node scripts/lib/wasm-imports.mjs path/to/module.wasm` prints JSON.
//
// Format reference: WebAssembly core spec, "Binary Format" (modules, sections 2 and 7).

import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { resolve } from 'node:path';

const IMPORT_SECTION = 2;
const EXPORT_SECTION = 7;
// The kind names of the JS API (WebAssembly.Module.imports/exports), so results compare directly.
const KIND_NAMES = ['function', 'table', 'memory', 'global', 'tag'];

class Reader {
  constructor(bytes, start = 0, end = bytes.length) {
    this.bytes = bytes;
    this.pos = start;
    this.end = end;
  }

  fail(msg) {
    throw new Error(`malformed wasm at byte ${this.pos}: ${msg}`);
  }

  byte() {
    if (this.pos >= this.end) this.fail('unexpected end of data');
    return this.bytes[this.pos++];
  }

  // Unsigned LEB128, up to 64 bits (returned as a Number when it fits, else a BigInt).
  uleb() {
    let result = 0n;
    let shift = 0n;
    for (;;) {
      const b = this.byte();
      result |= BigInt(b & 0x7f) << shift;
      if ((b & 0x80) === 0) break;
      shift += 7n;
      if (shift > 63n) this.fail('LEB128 integer too long');
    }
    return result <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(result) : result;
  }

  // Signed LEB128 (only skipped here: heap type indices of reference types).
  sleb() {
    let shift = 0;
    for (;;) {
      const b = this.byte();
      shift += 7;
      if ((b & 0x80) === 0) break;
      if (shift > 70) this.fail('LEB128 integer too long');
    }
  }

  name() {
    const len = this.uleb();
    if (typeof len !== 'number' || this.pos + len > this.end) this.fail('name runs past its section');
    const s = new TextDecoder('utf-8', { fatal: true }).decode(
      this.bytes.subarray(this.pos, this.pos + len),
    );
    this.pos += len;
    return s;
  }

  // A value type or reference type: one byte, except the typed references (ref null ht) / (ref ht).
  valtype() {
    const t = this.byte();
    if (t === 0x63 || t === 0x64) this.sleb();
  }

  limits() {
    const flags = this.byte();
    this.uleb(); // min
    if (flags & 0x01) this.uleb(); // max
  }
}

/**
 * Reads the imports and exports of a wasm module.
 * @param {Uint8Array} bytes the module's binary
 * @returns {{ imports: {module: string, name: string, kind: string}[],
 *             exports: {name: string, kind: string}[],
 *             sections: number[] }}
 */
export function readWasmInterface(bytes) {
  if (!(bytes instanceof Uint8Array)) throw new TypeError('expected a Uint8Array');
  const r = new Reader(bytes);
  const magic = [r.byte(), r.byte(), r.byte(), r.byte()];
  if (magic.join() !== '0,97,115,109') throw new Error('not a wasm module (bad magic)');
  const version = r.byte() | (r.byte() << 8) | (r.byte() << 16) | (r.byte() << 24);
  if (version !== 1) throw new Error(`unsupported wasm binary version ${version}`);

  const imports = [];
  const exports = [];
  const sections = [];
  while (r.pos < r.end) {
    const id = r.byte();
    const size = r.uleb();
    if (typeof size !== 'number' || r.pos + size > r.end) r.fail(`section ${id} runs past the end`);
    const sectionEnd = r.pos + size;
    sections.push(id);
    const s = new Reader(bytes, r.pos, sectionEnd);
    if (id === IMPORT_SECTION) {
      const count = s.uleb();
      for (let i = 0; i < count; i++) {
        const module = s.name();
        const name = s.name();
        const kind = s.byte();
        switch (kind) {
          case 0: s.uleb(); break; // type index
          case 1: s.valtype(); s.limits(); break; // table: reftype, limits
          case 2: s.limits(); break; // memory
          case 3: s.valtype(); s.byte(); break; // global: valtype, mutability
          case 4: s.byte(); s.uleb(); break; // tag: attribute, type index
          default: s.fail(`unknown import kind ${kind}`);
        }
        imports.push({ module, name, kind: KIND_NAMES[kind] });
      }
    } else if (id === EXPORT_SECTION) {
      const count = s.uleb();
      for (let i = 0; i < count; i++) {
        const name = s.name();
        const kind = s.byte();
        s.uleb(); // index
        exports.push({ name, kind: KIND_NAMES[kind] ?? `kind${kind}` });
      }
    }
    r.pos = sectionEnd;
  }
  return { imports, exports, sections };
}

/** Convenience: only the imports. */
export function readWasmImports(bytes) {
  return readWasmInterface(bytes).imports;
}

/**
 * Import modules that are not the host: placeholders that the wasm-bindgen CLI resolves itself
 * when it generates the JS glue (`__wbindgen_placeholder__`, `__wbindgen_externref_xform__`), and
 * the glue's own module name (`wbg`).
 */
export const BINDGEN_IMPORT_MODULES = new Set([
  '__wbindgen_placeholder__',
  '__wbindgen_externref_xform__',
  'wbg',
]);

/** The imports that the host would have to provide (`env`, WASI, anything but wasm-bindgen's). */
export function hostImports(imports) {
  return imports.filter((i) => !BINDGEN_IMPORT_MODULES.has(i.module));
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const file = process.argv[2];
  if (!file) {
    console.error('usage: node scripts/lib/wasm-imports.mjs MODULE.wasm');
    process.exit(2);
  }
  const { imports, exports } = readWasmInterface(new Uint8Array(readFileSync(file)));
  console.log(JSON.stringify({ imports, exports }, null, 2));
}
