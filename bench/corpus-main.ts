/**
 * The corpus as a script, run from the sources under tsx (`npm run bench -- corpus` spawns it):
 * it drives test/e2e helpers and fixtures that live beside the sources, not in build/.
 * Exit 1 when any run's findings disagree with its labels.
 */
import { benchCorpus } from './corpus.js';

benchCorpus((line) => console.log(line)).then(
  (mismatches) => process.exit(mismatches > 0 ? 1 : 0),
  (err: unknown) => {
    console.error(err);
    process.exit(2);
  },
);
