// The Client suite on the fallback module (no `simd128`).
import { before } from 'node:test';
import { init } from 'ringfence';
import { defineClientSuite } from './client-suite.mjs';

before(() => init({ forceFallback: true }));

defineClientSuite('nosimd');
