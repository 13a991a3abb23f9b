// Every lab, in the course's order. Adding a lab adds its files under web/labs/ and one line here;
// the page, the worker, the CLI and the tests find it through this list.
import { alignmentLab } from './01_alignment.js';
import { lookupLab } from './02_lookup.js';
import { countLab } from './03_count.js';
import { scaledLab } from './04_scaled.js';
import { pretrainedLab } from './05_pretrained.js';
import { translationLab } from './06_translation.js';
import { writingLab } from './07_writing.js';
import { inductionLab } from './08_induction.js';

export const LABS = [alignmentLab, lookupLab, countLab, scaledLab, pretrainedLab, translationLab,
  writingLab, inductionLab];

/** The lab with this id, or undefined. */
export const labById = (id) => LABS.find((lab) => lab.id === id);

/** The lab after this one in the course, or undefined for the last. */
export const nextLab = (lab) => LABS[LABS.indexOf(lab) + 1];
