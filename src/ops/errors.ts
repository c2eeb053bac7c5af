/** The ops' input error, defined in src/util (the hyperparameter checks throw it too). */
export { OpInputError } from '../util/input-error';
