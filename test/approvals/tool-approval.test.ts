/**
 * Tool approvals on the real path: worker processes (SIGKILLable), the dev server, the database and
 * the strict fake model. What reaches the model, how often the tool ran (its own log), the stored
 * row and transcript are checked for approve, deny, timeout, a repeated decision and crashes.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fakeReply, type FakeRequest } from '../../src/testing';
import { FailureTypes } from '../../src/protocol';
import { getToolApproval, listPendingApprovals, type ToolApprovalRow } from '../../src/store/approvals-repo';
import { sharedDatabases } from '../support/shared-database';
import { crashSuite, storedTranscript, type CrashRig } from '../support/crash-rig';
import { readLog, sideEffectFiles } from '../support/crash-tools';
import { INVOICE_TOOL } from './approval-tools';

const suite = crashSuite();
const TOOLS_MODULE = join(__dirname, 'approval-tools.ts');

/** The tool_result blocks of a model request, as the API receives them (is_error absent counts as false). */
function toolResults(request: FakeRequest): Array<{ tool_use_id: string; is_error: boolean; text: string }> {
  return (request.body.messages ?? [])
    .flatMap((m: { content: unknown }) => (Array.isArray(m.content) ? m.content : []))
    .filter((b: { type: string }) => b.type === 'tool_result')
    .map((b: { tool_use_id: string; is_error?: boolean; content: string | Array<{ text: string }> }) => ({
      tool_use_id: b.tool_use_id,
      is_error: b.is_error === true,
      text: typeof b.content === 'string' ? b.content : b.content.map((c) => c.text).join(''),
    }));
}

/** Resolves with the agent's one pending approval once the turn has recorded it. */
async function pendingApproval(rig: CrashRig, timeoutMs = 60_000): Promise<ToolApprovalRow> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const rows = await listPendingApprovals(rig.store.db, rig.agentId);
    if (rows.length === 1) return rows[0]!;
    if (Date.now() > deadline) throw new Error(`expected one pending approval, found ${rows.length}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/**
 * Resolves once the session's workflow holds the approval: the row is written by the tool step
 * before the step's result reaches the workflow, so a kill between the two is not yet "during the wait".
 */
async function workflowWaitsOn(
  keel: { getStatus(key: string): Promise<{ pendingApprovals?: readonly { approvalId: string }[] }> },
  sessionKey: string,
  approvalId: string,
  timeoutMs = 60_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await keel.getStatus(sessionKey)).pendingApprovals?.some((p) => p.approvalId === approvalId)) {
    if (Date.now() > deadline) throw new Error(`the workflow never held approval ${approvalId}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe.each(sharedDatabases())('tool approvals, on $name', (kind) => {
  const rig = suite.rigPerTest(kind);
  let sideEffects: string;
  beforeEach(() => {
    sideEffects = mkdtempSync(join(tmpdir(), 'keel-approvals-'));
  });
  afterEach(() => {
    rmSync(sideEffects, { recursive: true, force: true });
  });

  const workerEnv = (timeout = '10m') => ({
    KEEL_TOOLS_MODULE: TOOLS_MODULE,
    KEEL_TEST_SIDE_EFFECTS: sideEffects,
    KEEL_APPROVAL_TIMEOUT: timeout,
  });
  const client = () => rig.client({ toolHeartbeatTimeoutMs: 2_000, modelHeartbeatTimeoutMs: 2_000 });
  const invoiceCall = (amount: number) =>
    fakeReply.toolUse([
      {
        id: 'toolu_invoice',
        name: INVOICE_TOOL,
        input: { customer: 'acme', amount, apiKey: 'sk-ant-api03-abcdefghijklmnopqrstuvwxyz0123456789' },
      },
    ]);
  const runs = () => readLog(sideEffectFiles(sideEffects).performed);

  it('runs an approved call once, with its usual idempotency key, and a second decision gets the first outcome', async () => {
    rig.fake.enqueue(invoiceCall(500), fakeReply.text('the invoice is sent'));
    await rig.startReadyWorker(workerEnv());
    const keel = client();
    const reply = keel.sendMessage(rig.sessionKey, 'invoice acme 500');

    const row = await pendingApproval(rig);
    expect(row).toMatchObject({ session_key: rig.sessionKey, tool_name: INVOICE_TOOL, tool_call_id: 'toolu_invoice' });
    // The row holds the arguments redacted: the key never reaches the approvals table.
    expect(JSON.stringify(row.arguments)).not.toContain('sk-ant-api03');
    expect(row.arguments).toMatchObject({ customer: 'acme', amount: 500 });
    const status = await keel.getStatus(rig.sessionKey);
    expect(status.pendingApprovals).toEqual([
      expect.objectContaining({ approvalId: row.id, toolName: INVOICE_TOOL, toolCallId: 'toolu_invoice' }),
    ]);
    expect(runs()).toEqual([]);

    const approved = await keel.approve(rig.sessionKey, row.id, { by: 'alice', note: 'known customer' });
    expect(approved).toMatchObject({
      approvalId: row.id,
      status: 'approved',
      decidedBy: 'alice',
      note: 'known customer',
    });
    // The run keeps its decisions: a second decision, of either kind, gets the first outcome back.
    expect(await keel.deny(rig.sessionKey, row.id, { by: 'bob', reason: 'too late' })).toEqual(approved);
    expect((await reply).reply).toBe('the invoice is sent');
    const { entries } = await storedTranscript(rig.store, rig.agentId, rig.sessionKey);
    const call = entries.find((e) => e.role === 'assistant')!;
    expect(runs()).toEqual([expect.stringMatching(new RegExp(`/${call.id}/toolu_invoice$`))]);
    expect(toolResults(rig.fake.requests[1]!)).toEqual([
      { tool_use_id: 'toolu_invoice', is_error: false, text: 'invoice of 500 sent to acme' },
    ]);
    const decision = entries.find((e) => e.type === 'custom');
    expect(decision?.payload).toMatchObject({
      customType: 'tool_approval',
      data: { approvalId: row.id, status: 'approved', decidedBy: 'alice', toolName: INVOICE_TOOL },
    });
    expect(await getToolApproval(rig.store.db, row.id)).toMatchObject({
      status: 'approved',
      decided_by: 'alice',
      note: 'known customer',
    });
    rig.fake.assertScriptConsumed();
  });

  it('never runs a denied call and tells the model who denied it and why', async () => {
    rig.fake.enqueue(invoiceCall(900), fakeReply.text('the invoice was refused'));
    await rig.startReadyWorker(workerEnv());
    const keel = client();
    const reply = keel.sendMessage(rig.sessionKey, 'invoice acme 900');
    const row = await pendingApproval(rig);

    const denied = await keel.deny(rig.sessionKey, row.id, { by: 'bob', reason: 'over budget' });
    expect(denied).toMatchObject({ status: 'denied', decidedBy: 'bob', reason: 'over budget' });
    expect((await reply).reply).toBe('the invoice was refused');

    expect(runs()).toEqual([]);
    expect(toolResults(rig.fake.requests[1]!)).toEqual([
      {
        tool_use_id: 'toolu_invoice',
        is_error: true,
        text: 'tool "send_invoice" was not run: the call was denied by bob: over budget',
      },
    ]);
    expect(await getToolApproval(rig.store.db, row.id)).toMatchObject({ status: 'denied', decided_by: 'bob' });
    rig.fake.assertScriptConsumed();
  });

  it('denies a call nobody decided within the timeout, and a small amount runs without asking', async () => {
    rig.fake.enqueue(invoiceCall(700), fakeReply.text('nobody approved it'), invoiceCall(50), fakeReply.text('sent'));
    await rig.startReadyWorker(workerEnv('2s'));
    const keel = client();
    expect((await keel.sendMessage(rig.sessionKey, 'invoice acme 700')).reply).toBe('nobody approved it');
    expect(runs()).toEqual([]);
    expect(toolResults(rig.fake.requests[1]!)).toEqual([
      {
        tool_use_id: 'toolu_invoice',
        is_error: true,
        text: 'tool "send_invoice" was not run: the call was denied: timed out',
      },
    ]);
    const [row] = await rig.store.db
      .selectFrom('tool_approvals')
      .selectAll()
      .where('agent_id', '=', rig.agentId)
      .execute();
    expect(row).toMatchObject({ status: 'denied', decided_by: null, note: 'timed out' });

    // Under the tool's threshold its policy asks nobody: no new row, the tool runs at once.
    expect((await keel.sendMessage(rig.sessionKey, 'invoice acme 50')).reply).toBe('sent');
    expect(runs()).toHaveLength(1);
    expect(
      await rig.store.db.selectFrom('tool_approvals').select('id').where('agent_id', '=', rig.agentId).execute(),
    ).toHaveLength(1);
    rig.fake.assertScriptConsumed();
  });

  it('denies the waiting call when its sender cancels the turn: the row is not left pending and the tool never runs', async () => {
    rig.fake.enqueue(invoiceCall(600));
    await rig.startReadyWorker(workerEnv());
    const keel = client();
    const reply = keel.sendMessage(rig.sessionKey, 'invoice acme 600', { requestId: 'cancel-me' }).catch((e) => e);
    const row = await pendingApproval(rig);
    await keel.cancelRequest(rig.sessionKey, 'cancel-me');
    expect(await reply).toMatchObject({ type: FailureTypes.Cancelled });
    expect(await getToolApproval(rig.store.db, row.id)).toMatchObject({
      status: 'denied',
      note: 'the turn was cancelled',
    });
    expect(await listPendingApprovals(rig.store.db, rig.agentId)).toEqual([]);
    expect(runs()).toEqual([]);
    rig.fake.assertScriptConsumed();
  });

  it('runs the call exactly once when the worker is SIGKILLed during the wait and again just after the approval', async () => {
    rig.fake.enqueue(invoiceCall(500), fakeReply.text('sent after two crashes'));
    const first = await rig.startReadyWorker(workerEnv());
    const keel = client();
    const reply = keel.sendMessage(rig.sessionKey, 'invoice acme 500');
    const row = await pendingApproval(rig);
    await workflowWaitsOn(keel, rig.sessionKey, row.id);
    await first.kill('SIGKILL');

    const second = await rig.startReadyWorker(workerEnv());
    await keel.approve(rig.sessionKey, row.id, { by: 'carol' });
    await second.kill('SIGKILL');
    await rig.startReadyWorker(workerEnv());

    expect((await reply).reply).toBe('sent after two crashes');
    expect(runs()).toHaveLength(1);
    expect(toolResults(rig.fake.requests.at(-1)!)).toEqual([
      { tool_use_id: 'toolu_invoice', is_error: false, text: 'invoice of 500 sent to acme' },
    ]);
    expect(await getToolApproval(rig.store.db, row.id)).toMatchObject({ status: 'approved', decided_by: 'carol' });
    const { entries } = await storedTranscript(rig.store, rig.agentId, rig.sessionKey);
    expect(entries.map((e) => e.role ?? e.type)).toEqual(['user', 'assistant', 'custom', 'toolResult', 'assistant']);
  });
});
