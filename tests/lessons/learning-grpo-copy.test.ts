/** A learning lesson's claim on seeds 1–3 against its control (see learning.ts). */
import { learningTest } from './learning';

learningTest('grpo-copy');
