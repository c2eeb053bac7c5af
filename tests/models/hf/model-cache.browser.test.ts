import { describe, expect, it } from 'vitest';
import { MODEL_CACHE_NAME, openCacheStorage } from '../../../src/models/hf/model-cache';
import { blobSource } from '../../../src/models/hf/random-access-source';
import { readSafetensorsHeader, tensorToF32 } from '../../../src/models/hf/safetensors';
import { writeSafetensors } from '../../../src/models/hf/safetensors-writer';

describe('Cache Storage model cache (Chromium)', () => {
  it('stores a file, gives it back as a Blob a safetensors reader reads by ranges, deletes it', async () => {
    const cache = await openCacheStorage(`${MODEL_CACHE_NAME}-test`);
    expect(cache).toBeDefined();
    const bytes = writeSafetensors([{ name: 'w', dtype: 'F32', shape: [3], data: [1.5, -2, 3] }]);
    const key = 'https://huggingface.co/org/tiny/resolve/main/model.safetensors';
    expect(await cache!.get(key)).toBeUndefined();
    await cache!.put(key, new Blob([bytes]));
    expect(await cache!.keys()).toEqual([key]);
    const blob = await cache!.get(key);
    expect(blob?.size).toBe(bytes.length);
    const header = await readSafetensorsHeader(blobSource(blob!, 'model.safetensors'));
    expect([...(await tensorToF32(header, 'w'))]).toEqual([1.5, -2, 3]);
    expect(await cache!.delete(key)).toBe(true);
    expect(await cache!.keys()).toEqual([]);
    await caches.delete(`${MODEL_CACHE_NAME}-test`);
  });
});
