/**
 * The Node-only details of running onnxruntime-web, in one function: which build to load and
 * where its wasm files are. In Node that is the package's node build (wasm EP only, the smaller
 * binary: see ort-reference.ts for why not the WebGPU build), loading its .wasm from the
 * package's dist/ folder, given as a file:// URL prefix.
 *
 * Kept apart from ort-reference.ts so that browser bundles never see `node:module`.
 */
import { createRequire } from 'node:module';
import { dirname } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { OrtSessionOptions } from './ort-reference';

/** Options for createOrtSession() in Node: `{ executionProviders: ['wasm'], ...nodeOrtOptions() }`. */
export function nodeOrtOptions(): Required<Pick<OrtSessionOptions, 'build' | 'wasmPaths'>> {
  // The package's CommonJS entry (dist/ort.node.min.js) sits in dist/, next to the .wasm files.
  const entry = createRequire(import.meta.url).resolve('onnxruntime-web');
  return { build: 'wasm', wasmPaths: `${pathToFileURL(dirname(entry)).href}/` };
}
