// The serving suite on the simd module (what `init()` picks in Node ≥ 20).
import { before } from 'node:test';
import { init } from 'ringfence';
import { defineServeSuite } from './serve-suite.mjs';

before(() => init());

defineServeSuite('simd');
