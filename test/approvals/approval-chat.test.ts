/**
 * `/approve` in `keel chat` through a real pseudo-terminal (tmux): the chat says which call waits,
 * the person approves it while the turn waits, the call runs once and the reply follows. A worker
 * process, the dev server, the database and the strict fake model.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fakeReply } from '../../src/testing';
import { getToolApproval } from '../../src/store/approvals-repo';
import { sharedDatabases } from '../support/shared-database';
import { crashSuite } from '../support/crash-rig';
import { readLog, sideEffectFiles } from '../support/crash-tools';
import { keelInTerminal, type Terminal } from '../support/tmux-terminal';
import { tmuxPath } from '../support/tool-path';
import { INVOICE_TOOL } from './approval-tools';

const suite = crashSuite();
// Without tmux the suite is skipped; test/support/report-skips.ts says so at the start.
(tmuxPath() ? describe : describe.skip)('/approve in keel chat, through a pseudo-terminal', () => {
  // One database is enough: the chat reaches the session through Temporal, not the database.
  const rig = suite.rigPerTest(sharedDatabases()[0]!);
  let dir: string;
  let term: Terminal | undefined;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'keel-approvals-chat-'));
  });
  afterEach(() => {
    term?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('shows the waiting call, approves it from the prompt, and prints the reply after the call ran once', async () => {
    rig.fake.enqueue(
      fakeReply.toolUse([{ id: 'toolu_chat', name: INVOICE_TOOL, input: { customer: 'acme', amount: 300 } }]),
      fakeReply.text('Invoice sent to acme.'),
    );
    await rig.startReadyWorker({
      KEEL_TOOLS_MODULE: join(__dirname, 'approval-tools.ts'),
      KEEL_TEST_SIDE_EFFECTS: dir,
      KEEL_APPROVAL_TIMEOUT: '10m',
    });
    term = keelInTerminal(
      'approve',
      ['chat', rig.sessionKey],
      { ...rig.temporalEnv, KEEL_TASK_QUEUE: rig.taskQueue, DATABASE_URL: undefined, USER: 'frank' },
      dir,
    );
    await term.waitFor(/you › $/m, { timeoutMs: 120_000 });
    term.line('invoice acme 300');
    const shown = await term.waitFor(/waiting for approval: send_invoice ([0-9a-f-]{36})/, { timeoutMs: 60_000 });
    const id = /waiting for approval: send_invoice ([0-9a-f-]{36})/.exec(shown)![1]!;
    expect(readLog(sideEffectFiles(dir).performed)).toEqual([]);

    term.line('/approve looks right');
    await term.waitFor(new RegExp(`${id} approved by \\S+: looks right`), { timeoutMs: 60_000 });
    await term.waitFor(/keel › Invoice sent to acme\./, { timeoutMs: 60_000 });

    expect(readLog(sideEffectFiles(dir).performed)).toHaveLength(1);
    expect(await getToolApproval(rig.store.db, id)).toMatchObject({ status: 'approved', note: 'looks right' });
    const toolResult = rig.fake.requests[1]!.body.messages!.flatMap((m) =>
      Array.isArray(m.content) ? m.content : [],
    ).find((b: { type: string }) => b.type === 'tool_result');
    expect(toolResult).toMatchObject({ tool_use_id: 'toolu_chat', content: [{ text: 'invoice of 300 sent to acme' }] });
    rig.fake.assertScriptConsumed();
  });
});
