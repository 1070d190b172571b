import type { ValidationRule } from 'graphql';
import { depthRule } from './budgets.ts';

/**
 * Refuses operations nested deeper than `max` selections (fragments followed). Now graphql-armor's
 * max-depth rule with the other request budgets (budgets.ts); kept under its name for callers.
 */
export function depthLimit(max: number): ValidationRule {
  return depthRule(max);
}
