// What the page offers: the shipped models, the test set each was trained on, the protocols
// each can run on, and the deployments.

/** A test set of `models/data/`, by the name the API takes. */
export type SetName = 'mnist' | 'digits8';

export type Backend = 'meteor' | 'rep3' | 'mal3';

export type Output = 'scores' | 'class';

export type DeploymentKind = 'servers' | 'browser-party' | 'tabs';

export interface ModelInfo {
  /** The name the parties serve it under (`models/ID.onnx`). */
  readonly id: string;
  readonly label: string;
  readonly blurb: string;
  readonly set: SetName;
  readonly backends: readonly Backend[];
}

export interface SetInfo {
  /** Images are `side × side` pixels. */
  readonly side: number;
  /** The largest stored pixel value. */
  readonly max: number;
  /** What a stored pixel is multiplied by to become the model's input (as in training). */
  readonly scale: number;
  readonly caption: string;
}

export const MODELS: readonly ModelInfo[] = [
  { id: 'lenet', label: 'LeNet', blurb: 'CNN · 431k weights', set: 'mnist', backends: ['meteor', 'rep3', 'mal3'] },
  { id: 'nn-a', label: 'NN-A', blurb: '3 dense layers', set: 'mnist', backends: ['meteor', 'rep3', 'mal3'] },
  { id: 'nn-b', label: 'NN-B', blurb: 'conv + 2 dense', set: 'mnist', backends: ['meteor', 'rep3', 'mal3'] },
  { id: 'logreg', label: 'Logistic regression', blurb: '8×8 digits', set: 'digits8', backends: ['meteor', 'rep3', 'mal3'] },
  { id: 'svm', label: 'Linear SVM', blurb: '8×8 digits', set: 'digits8', backends: ['meteor', 'rep3', 'mal3'] },
  // Tree ensembles are evaluated obliviously: every node compared, every leaf indicator made.
  { id: 'tree', label: 'Decision tree', blurb: '8×8 digits · depth 6', set: 'digits8', backends: ['meteor', 'rep3', 'mal3'] },
];

/** Pixels are stored as bytes; the models take them scaled as in `scripts/models/`. */
export const SETS: Readonly<Record<SetName, SetInfo>> = {
  // train_mnist.py: byte p fed as p / 255.
  mnist: { side: 28, max: 255, scale: 1 / 255, caption: 'MNIST, 28×28' },
  // train_classical.py: scikit-learn's 8×8 digits, each pixel a count 0..16 of a 4×4 block of
  // a 32×32 bitmap, fed as is.
  digits8: { side: 8, max: 16, scale: 1, caption: 'scikit-learn digits, 8×8' },
};

export const BACKENDS: readonly { id: Backend; label: string; blurb: string }[] = [
  { id: 'meteor', label: 'METEOR', blurb: 'masked sharing, few rounds' },
  { id: 'rep3', label: 'rep3', blurb: 'replicated secret sharing' },
  { id: 'mal3', label: 'mal3', blurb: 'rep3, a cheating server caught · slower' },
];

export const OUTPUTS: readonly { id: Output; label: string; blurb: string }[] = [
  { id: 'scores', label: 'All scores', blurb: 'the class and every score' },
  // METEOR reveals the scores; rep3 and mal3 can compute the argmax under the sharing.
  { id: 'class', label: 'Class only', blurb: 'rep3 or mal3' },
];

export const DEPLOYMENTS: readonly { id: DeploymentKind; label: string; blurb: string; available: boolean }[] = [
  { id: 'servers', label: '3 servers', blurb: 'three native parties behind a relay', available: true },
  { id: 'browser-party', label: 'Browser as one party', blurb: 'this tab is P2, two native servers', available: true },
  { id: 'tabs', label: 'Three tabs (WebRTC)', blurb: 'each party a browser tab, linked directly · ≈10 s the first time', available: true },
];

/** The party this tab plays in the "browser as one party" deployment. */
export const PAGE_PARTY = 2;

/** What each compute party does with the model, by id. */
export const ROLES: readonly string[] = ['shares the weights', 'computes blind', 'computes blind'];

// The model files a tab loads when it is a party: the ONNX file at P0 (the weights are P0's to
// share), the shape file at P1 and P2 (no weights). Listed, not `*`: a build would copy every
// match.
const FILES: Record<string, string> = import.meta.glob('../../../models/{lenet,nn-a,nn-b,logreg,svm,tree}.{onnx,rfshape}', {
  query: '?url',
  import: 'default',
  eager: true,
});

/**
 * Where a page serving as party `party` gets model `id`'s file: the ONNX file (with the weights)
 * for P0, the model owner, and the weight-free shape file (`models/ID.rfshape`) for P1 and P2.
 */
export function modelUrl(id: string, party: number): string {
  const url = FILES[`../../../models/${id}.${party === 0 ? 'onnx' : 'rfshape'}`];
  if (!url) throw new Error(`no model file for ${id}`);
  return url;
}

export function modelInfo(id: string): ModelInfo {
  const m = MODELS.find((x) => x.id === id);
  if (!m) throw new Error(`unknown model ${id}`);
  return m;
}
