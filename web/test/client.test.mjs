// The Client suite on the SIMD module (what `init()` picks in Node ≥ 20).
import { before } from 'node:test';
import { init } from 'ringfence';
import { defineClientSuite } from './client-suite.mjs';

before(() => init());

defineClientSuite('simd');
