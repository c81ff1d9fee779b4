import type { Decider } from '../decider';
import {
  decideTemplates,
  evolveTemplateLibrary,
  initialTemplateLibraryState,
  type TemplateCommand,
  type TemplateEvent,
  type TemplateLibraryState,
} from './templates';

/**
 * An organization's template library as a decider: apart from the organization aggregate, because its rules (an
 * alias once, a layout in use, the count) span only templates, and a send reads templates far more often than
 * anything decides on members or keys.
 */
export const templateLibraryDecider: Decider<TemplateLibraryState, TemplateCommand, TemplateEvent> = {
  initialState: initialTemplateLibraryState,
  decide: decideTemplates,
  evolve: evolveTemplateLibrary,
};
