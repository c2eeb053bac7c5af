/** The CPU reference ops: the specification every WGSL kernel is tested against. */
export { OpInputError } from './errors';
export { logSoftmax } from './log-softmax';
