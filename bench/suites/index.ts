/** Every benchmark `npm run bench` knows, in the order it runs them. Add a suite here. */
import type { BenchSuite } from '../core/types';
import { logSoftmaxSuite } from './log-softmax.bench';
import { tokenLogprobsSuite } from './token-logprobs.bench';

export const SUITES: readonly BenchSuite[] = [tokenLogprobsSuite, logSoftmaxSuite];
