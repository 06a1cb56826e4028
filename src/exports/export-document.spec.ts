import { ExportContext, ExportSection, keysetList, renderExport } from './export-document';

function context(): ExportContext & { checkpoints: number } {
  const ctx = {
    exportId: 'e1',
    workspaceId: 'w1',
    userId: 'u1',
    db: { query: () => Promise.resolve([]) },
    checkpoints: 0,
    checkpoint: async () => {
      ctx.checkpoints++;
    },
  };
  return ctx;
}

async function text(chunks: AsyncIterable<string>): Promise<string> {
  let out = '';
  for await (const c of chunks) out += c;
  return out;
}

/** A list section over the numbers 1..n, read `limit` at a time. */
function numbers(key: string, n: number, limit: number, pages: number[][] = []): ExportSection {
  return {
    key,
    render: (ctx) =>
      keysetList<number>(
        ctx,
        async (after, lim) => {
          const start = (after ?? 0) + 1;
          const page = Array.from({ length: Math.max(0, Math.min(lim, n - start + 1)) }, (_, i) => start + i);
          pages.push(page);
          // parts of two items, as pageSql answers them in parts
          const parts: string[] = [];
          for (let i = 0; i < page.length; i += 2)
            parts.push(
              page
                .slice(i, i + 2)
                .map((v) => JSON.stringify({ v }))
                .join(','),
            );
          return { parts, count: page.length, last: page[page.length - 1] ?? null };
        },
        limit,
      ),
  };
}

describe('export document', () => {
  it('writes one JSON object: the header, then each section under its key', async () => {
    const ctx = context();
    const pages: number[][] = [];
    const single: ExportSection = {
      key: 'user',
      render: async function* () {
        yield '{"id":"u1"}';
      },
    };
    const doc = JSON.parse(
      await text(
        renderExport([single, numbers('items', 7, 3, pages), numbers('none', 0, 3)], ctx, new Date(0)),
      ),
    ) as Record<string, unknown>;
    expect(doc).toEqual({
      format: 'chat-service/user-export',
      version: 1,
      export_id: 'e1',
      workspace_id: 'w1',
      generated_at: '1970-01-01T00:00:00.000Z',
      user: { id: 'u1' },
      items: [1, 2, 3, 4, 5, 6, 7].map((v) => ({ v })),
      none: [],
    });
    // pages of 3 after the previous page's last key; a short page ends the list
    expect(pages).toEqual([[1, 2, 3], [4, 5, 6], [7]]);
    expect(ctx.checkpoints).toBeGreaterThanOrEqual(2);
  });

  it('a full last page costs one more (empty) read, and still closes the list', async () => {
    const pages: number[][] = [];
    const out = await text(numbers('items', 6, 3, pages).render(context()));
    expect(JSON.parse(out)).toHaveLength(6);
    expect(pages).toEqual([[1, 2, 3], [4, 5, 6], []]);
  });

  it('refuses two sections with one key (or a header key)', async () => {
    await expect(
      text(renderExport([numbers('a', 1, 3), numbers('a', 1, 3)], context(), new Date())),
    ).rejects.toThrow(/two export sections write "a"/);
    await expect(text(renderExport([numbers('format', 1, 3)], context(), new Date()))).rejects.toThrow(
      /"format"/,
    );
  });

  it('stops when a checkpoint throws (a lost lease, a shutdown)', async () => {
    const ctx = context();
    ctx.checkpoint = () => Promise.reject(new Error('stop'));
    await expect(text(numbers('items', 10, 3).render(ctx))).rejects.toThrow('stop');
  });
});
