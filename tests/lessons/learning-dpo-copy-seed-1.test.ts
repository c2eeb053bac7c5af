/** A learning lesson's claim on one seed against its control (see learning.ts). */
import { learningTest } from './learning';

learningTest('dpo-copy', 1);
