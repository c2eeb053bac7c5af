import type { Page } from '@playwright/test';
import { mkdirSync } from 'node:fs';

export const SCREENSHOTS = 'test-output/screenshots';
mkdirSync(SCREENSHOTS, { recursive: true });

/** Fails the test on any console error or uncaught exception, from the page or its workers. */
export function collectErrors(page: Page): string[] {
  const errors: string[] = [];
  page.on('console', (message) => {
    if (message.type() === 'error') errors.push(`console: ${message.text()}`);
  });
  page.on('pageerror', (error) => errors.push(`pageerror: ${error.message}`));
  return errors;
}
