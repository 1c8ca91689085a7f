/**
 * A session that must continue as new while a turn waits for approval: the dev server suggests
 * continue-as-new early, a message queued behind the waiting turn wakes the run, the turn is handed
 * on mid-wait, and the approval given to the new run runs the call once. Worker processes, the dev
 * server, the database and the strict fake model.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fakeReply } from '../../src/testing';
import { listPendingApprovals } from '../../src/store/approvals-repo';
import { sharedDatabases } from '../support/shared-database';
import { crashSuite, storedTranscript } from '../support/crash-rig';
import { readLog, sideEffectFiles } from '../support/crash-tools';
import { waitUntil } from '../support/wait-until';
import { INVOICE_TOOL } from './approval-tools';

// Continue-as-new is suggested past this many history events: past one turn and into the second.
const suite = crashSuite({ dynamicConfig: { 'limit.historyCount.suggestContinueAsNew': 20 } });

describe.each(sharedDatabases())('a continue-as-new while a tool call waits for approval, on $name', (kind) => {
  const rig = suite.rigPerTest(kind);
  let sideEffects: string;
  beforeEach(() => {
    sideEffects = mkdtempSync(join(tmpdir(), 'keel-approvals-can-'));
  });
  afterEach(() => {
    rmSync(sideEffects, { recursive: true, force: true });
  });

  it('hands the waiting turn to the next run, which takes the approval and runs the call once, then the queued message', async () => {
    rig.fake.enqueue(
      fakeReply.text('hello there'),
      fakeReply.toolUse([{ id: 'toolu_can', name: INVOICE_TOOL, input: { customer: 'acme', amount: 800 } }]),
      fakeReply.text('sent after continue-as-new'),
      fakeReply.text('nothing else to do'),
    );
    await rig.startReadyWorker({
      KEEL_TOOLS_MODULE: join(__dirname, 'approval-tools.ts'),
      KEEL_TEST_SIDE_EFFECTS: sideEffects,
      KEEL_APPROVAL_TIMEOUT: '10m',
    });
    const keel = rig.client();
    const { workflowId } = keel.identify(rig.sessionKey);
    const runId = async () => (await keel.temporal.workflow.getHandle(workflowId).describe()).runId;
    expect((await keel.sendMessage(rig.sessionKey, 'hello')).reply).toBe('hello there');

    const helloRun = await runId();
    const invoice = keel.sendMessage(rig.sessionKey, 'invoice acme 800');
    // A message queued behind the waiting turn, carried across with it.
    const queued = keel.sendMessage(rig.sessionKey, 'anything else?');
    const [row] = await waitUntil('the call waits for approval', async () => {
      const rows = await listPendingApprovals(rig.store.db, rig.agentId);
      return rows.length === 1 ? rows : undefined;
    });
    // The run past the suggested history length handed the waiting turn on: the new run starts with it.
    await waitUntil('a run started with the waiting turn', async () => {
      if ((await runId()) === helloRun) return undefined;
      const started = (await keel.temporal.workflow.getHandle(workflowId).fetchHistory()).events?.[0];
      const payload = started?.workflowExecutionStartedEventAttributes?.input?.payloads?.[0]?.data;
      const input = payload ? JSON.parse(Buffer.from(payload).toString('utf8')) : undefined;
      return input?.carried?.suspendedTurn?.approval?.approvalId === row!.id;
    });
    const status = await keel.getStatus(rig.sessionKey);
    expect(status.pendingApprovals).toEqual([expect.objectContaining({ approvalId: row!.id, toolName: INVOICE_TOOL })]);
    expect(readLog(sideEffectFiles(sideEffects).performed)).toEqual([]);

    expect(await keel.approve(rig.sessionKey, row!.id, { by: 'erin' })).toMatchObject({ status: 'approved' });
    expect((await invoice).reply).toBe('sent after continue-as-new');
    expect((await queued).reply).toBe('nothing else to do');

    const { entries } = await storedTranscript(rig.store, rig.agentId, rig.sessionKey);
    const call = entries.find((e) => e.payload.message?.content?.some?.((b: { id?: string }) => b.id === 'toolu_can'));
    expect(readLog(sideEffectFiles(sideEffects).performed)).toEqual([
      expect.stringMatching(new RegExp(`/${call!.id}/toolu_can$`)),
    ]);
    expect(entries.map((e) => e.role ?? e.type)).toEqual([
      'user',
      'assistant',
      'user',
      'assistant',
      'custom',
      'toolResult',
      'assistant',
      'user',
      'assistant',
    ]);
    rig.fake.assertScriptConsumed();
  });
});
