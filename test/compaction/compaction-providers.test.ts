import {
  compactionProviderFor,
  registerCompactionProvider,
  summaryFromProvider,
  type CompactionProvider,
  type CompactionProviderRequest,
} from '../../src/compaction/compaction-providers';

function request(signal = new AbortController().signal): CompactionProviderRequest {
  return {
    agentId: 'a',
    sessionKey: 'agent:a:main',
    sessionId: 's',
    compactionId: 'c',
    text: 'user: hi',
    instructions: 'keep identifiers',
    prompt: '<conversation>user: hi</conversation>',
    systemPrompt: 'summarize',
    signal,
  };
}

function around() {
  const record = { builtin: 0, billed: [] as unknown[], warnings: [] as string[] };
  return {
    record,
    fallback: {
      builtin: async () => (record.builtin++, 'builtin summary'),
      bill: async (b: unknown) => void record.billed.push(b),
      warn: (m: string) => void record.warnings.push(m),
    },
  };
}

const provider = (summarize: CompactionProvider['summarize']): CompactionProvider => ({ id: 'p', summarize });

describe('summaryFromProvider', () => {
  it("returns the provider's summary and bills it, without Keel's summarizer", async () => {
    const { record, fallback } = around();
    const billing = { model: 'm', inputTokens: 10, cacheReadTokens: 0, cacheWriteTokens: 0, outputTokens: 2 };
    const summary = await summaryFromProvider(
      provider(async () => ({ summary: 'theirs', billing })),
      request(),
      fallback,
    );
    expect(summary).toBe('theirs');
    expect(record).toEqual({ builtin: 0, billed: [billing], warnings: [] });
  });

  it.each([
    ['throws', async () => Promise.reject(new Error('down')), /failed: down/],
    ['returns nothing', async () => undefined, /returned no summary/],
    ['returns an empty summary', async () => ({ summary: ' \n' }), /returned no summary/],
  ])("falls back to Keel's summarizer when the provider %s, and says so", async (_, summarize, warning) => {
    const { record, fallback } = around();
    expect(await summaryFromProvider(provider(summarize), request(), fallback)).toBe('builtin summary');
    expect(record.builtin).toBe(1);
    expect(record.warnings).toEqual([expect.stringMatching(warning)]);
  });

  it('re-throws when the request was aborted, and never asks the summarizer', async () => {
    const { record, fallback } = around();
    const controller = new AbortController();
    const aborted = new Error('aborted');
    const call = summaryFromProvider(
      provider(async ({ signal }) => {
        controller.abort();
        if (signal.aborted) throw aborted;
        return { summary: 'late' };
      }),
      request(controller.signal),
      fallback,
    );
    await expect(call).rejects.toBe(aborted);
    expect(record.builtin).toBe(0);
  });
});

describe('compactionProviderFor', () => {
  it('finds a registered provider and names the registration when none is', () => {
    expect(compactionProviderFor(undefined)).toBeUndefined();
    expect(() => compactionProviderFor('nope')).toThrow(/"nope" is not a registered compaction provider/);
    const unregister = registerCompactionProvider(provider(async () => undefined));
    try {
      expect(compactionProviderFor('p')?.id).toBe('p');
    } finally {
      unregister();
    }
  });
});
