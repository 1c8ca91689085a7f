/**
 * `keel approvals`, `keel deny`, `keel approve` and `keel status` as a person runs them, against a
 * worker process, the dev server, the database and the strict fake model.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fakeReply } from '../../src/testing';
import { sharedDatabases } from '../support/shared-database';
import { crashSuite } from '../support/crash-rig';
import { readLog, sideEffectFiles } from '../support/crash-tools';
import { keel } from '../support/keel-cli';
import { waitUntil } from '../support/wait-until';
import { INVOICE_TOOL } from './approval-tools';

const suite = crashSuite();

describe.each(sharedDatabases())('the approval commands, on $name', (kind) => {
  const rig = suite.rigPerTest(kind);
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'keel-approvals-cli-'));
  });
  afterEach(() => {
    rmSync(dir, { recursive: true, force: true });
  });

  it('lists the waiting call, denies it, keeps that outcome for a later approve, and names what is missing', async () => {
    rig.fake.enqueue(
      fakeReply.toolUse([{ id: 'toolu_cli', name: INVOICE_TOOL, input: { customer: 'acme', amount: 250 } }]),
      fakeReply.text('not sent'),
    );
    await rig.startReadyWorker({
      KEEL_TOOLS_MODULE: join(__dirname, 'approval-tools.ts'),
      KEEL_TEST_SIDE_EFFECTS: dir,
    });
    const reply = rig.client().sendMessage(rig.sessionKey, 'invoice acme 250');
    const env = {
      DATABASE_URL: rig.database.url,
      ...rig.temporalEnv,
      KEEL_TASK_QUEUE: rig.taskQueue,
    };

    const approval = await waitUntil('the call waits', async () => {
      const listed = await keel(['approvals', '--agent', rig.agentId, '--json'], env);
      expect(listed.code).toBe(0);
      const [one] = (JSON.parse(listed.stdout) as { approvals: Array<{ id: string; toolName: string }> }).approvals;
      return one;
    });
    expect(approval.toolName).toBe(INVOICE_TOOL);
    const status = await keel(['status', rig.sessionKey], env);
    expect(status.stderr).toContain(`waiting for approval: ${INVOICE_TOOL} ${approval.id}`);

    const denied = await keel(['deny', approval.id, '--reason', 'wrong customer', '--by', 'gina', '--json'], env);
    expect(denied.code).toBe(0);
    expect(JSON.parse(denied.stdout)).toMatchObject({ status: 'denied', decidedBy: 'gina', reason: 'wrong customer' });
    expect((await reply).reply).toBe('not sent');

    // The first decision stands: an approval afterwards prints it and exits 1.
    const late = await keel(['approve', approval.id], env);
    expect(late.code).toBe(1);
    expect(late.stderr).toContain(`${approval.id} denied by gina: wrong customer`);
    const unknown = await keel(['approve', 'no-such-approval'], env);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain('no tool approval no-such-approval; `keel approvals` lists the pending ones');
    const noTemporal = await keel(['deny', approval.id], { ...env, TEMPORAL_ADDRESS: '127.0.0.1:1' });
    expect(noTemporal.stderr).toContain('cannot reach Temporal at 127.0.0.1:1 (TEMPORAL_ADDRESS)');

    expect(readLog(sideEffectFiles(dir).performed)).toEqual([]);
    rig.fake.assertScriptConsumed();
  });
});
