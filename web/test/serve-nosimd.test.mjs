// The serving suite on the nosimd module (no `simd128`).
import { before } from 'node:test';
import { init } from 'ringfence';
import { defineServeSuite } from './serve-suite.mjs';

before(() => init({ forceFallback: true }));

defineServeSuite('nosimd');
