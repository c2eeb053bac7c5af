import { expect, test, type Page } from '@playwright/test';
import { readFileSync, writeFileSync } from 'node:fs';
import { CHECKSUM_KEY, PRODUCER_VERSION, withChecksum } from '../../src/onnx/integrity';
import { decodeModel, encodeModel } from '../../src/onnx/onnx-proto';
import { SCREENSHOTS, collectErrors } from './support';

/** The shipped copy model, written again with a checksum or without one (as exported before). */
function copyModel(checksum: boolean): Uint8Array {
  const model = decodeModel(new Uint8Array(readFileSync('public/models/copy.onnx')));
  model.metadataProps = model.metadataProps.filter((e) => e.key !== CHECKSUM_KEY);
  model.producerVersion = checksum ? PRODUCER_VERSION : '1';
  return checksum ? withChecksum(encodeModel(model)) : encodeModel(model);
}

async function startFrom(page: Page, path: string, n: number) {
  const form = page.getByRole('form', { name: 'New run' });
  await form.getByLabel('Algorithm').selectOption('grpo');
  await form.getByLabel('Task').selectOption('copy');
  await form.getByLabel('Backend').selectOption('cpu');
  await form.getByLabel('Start from').selectOption('file');
  await form.getByLabel('Weights file', { exact: true }).setInputFiles(path);
  await form.getByRole('button', { name: 'Create run' }).click();
  return page.getByRole('article', { name: `#${n} grpo on copy` });
}

test('an ONNX file without a checksum starts with a note; a damaged one is refused', async ({
  page,
}) => {
  test.setTimeout(120_000);
  const errors = collectErrors(page);
  const unchecked = 'test-output/copy-unchecked.onnx';
  writeFileSync(unchecked, copyModel(false));
  const damaged = copyModel(true);
  damaged[damaged.length >> 1]! ^= 0x10; // one bit, in the weights
  writeFileSync('test-output/copy-damaged.onnx', damaged);

  await page.goto('/#/lab');
  const first = await startFrom(page, unchecked, 1);
  await expect(first.getByTestId('run-status')).toHaveText('idle', { timeout: 60_000 });
  await expect(first.getByTestId('run-note')).toHaveText(
    'This ONNX file has no checksum (exported before checksums, or rewritten by another tool), ' +
      'so damage to its weights could not be detected.',
  );
  await first.screenshot({ path: `${SCREENSHOTS}/lab-onnx-no-checksum.png` });

  const second = await startFrom(page, 'test-output/copy-damaged.onnx', 2);
  await expect(second.getByTestId('run-status')).toHaveText('error', { timeout: 60_000 });
  await expect(second.getByRole('alert')).toContainText(
    /metadata_props\["agent-rl-lab\/crc32"\] is 0x[0-9a-f]{8}, but the file's bytes give 0x[0-9a-f]{8}: the file is damaged/,
  );
  await second.screenshot({ path: `${SCREENSHOTS}/lab-onnx-damaged.png` });
  expect(errors.filter((e) => !/damaged/.test(e))).toEqual([]);
});
