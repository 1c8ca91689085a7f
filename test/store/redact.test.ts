import { jsonTextMayHoldSecret, redactSecrets, redactionMarker, type SecretKind } from '../../src/security/redact';
import { prng } from '../fixtures/generate';

// Fake secrets are built at run time with the real prefixes, alphabets and lengths, so no
// secret-shaped literal sits in the repository.
const ALNUM = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
const URLSAFE = `${ALNUM}_-`;
const BASE64 = `${ALNUM}+/`;
const UPPER_DIGITS = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';
const DIGITS = '0123456789';

/** Deterministic pseudo-random text (seeded), so every run sees the same samples. */
function fake(length: number, alphabet: string, seed = length * 7919): string {
  const random = prng(seed);
  let out = '';
  for (let i = 0; i < length; i += 1) out += alphabet[Math.floor(random() * alphabet.length)];
  return out;
}

const base64url = (json: object) => Buffer.from(JSON.stringify(json)).toString('base64url');
const R = (kind: SecretKind) => redactionMarker(kind);

const anthropicKey = `sk-ant-api03-${fake(93, URLSAFE)}AA`;
const openaiLegacyKey = `sk-${fake(20, ALNUM)}T3BlbkFJ${fake(20, ALNUM, 3)}`;
const openaiProjectKey = `sk-proj-${fake(156, URLSAFE)}`;
const awsKeyId = `AKIA${fake(16, UPPER_DIGITS)}`;
const awsSecret = fake(40, BASE64, 11);
const githubPat = `ghp_${fake(36, ALNUM)}`;
const githubOauth = `gho_${fake(36, ALNUM, 5)}`;
const githubFineGrained = `github_pat_${fake(22, ALNUM)}_${fake(59, ALNUM)}`;
const slackBot = `xoxb-${fake(12, DIGITS)}-${fake(13, DIGITS)}-${fake(24, ALNUM)}`;
const googleKey = `AIza${fake(35, URLSAFE)}`;
const stripeLive = `sk_live_${fake(24, ALNUM)}`;
const stripeRestricted = `rk_live_${fake(99, ALNUM)}`;
const jwt = `${base64url({ alg: 'HS256', typ: 'JWT' })}.${base64url({ sub: '1234567890', name: 'Ada', iat: 1516239022 })}.${fake(43, URLSAFE)}`;
const bearer = `${fake(40, ALNUM, 9)}7`;
const pemBody = Array.from({ length: 6 }, (_, i) => fake(64, BASE64, i + 1)).join('\n');

describe('redactSecrets', () => {
  const samples: Array<[string, string, string, SecretKind[]]> = [
    [
      'an Anthropic key',
      `ANTHROPIC_API_KEY=${anthropicKey}`,
      `ANTHROPIC_API_KEY=${R('anthropic_key')}`,
      ['anthropic_key'],
    ],
    ['a legacy OpenAI key', `key: ${openaiLegacyKey}.`, `key: ${R('openai_key')}.`, ['openai_key']],
    ['an OpenAI project key', `"${openaiProjectKey}"`, `"${R('openai_key')}"`, ['openai_key']],
    [
      'an AWS access key id',
      `aws_access_key_id = ${awsKeyId}`,
      `aws_access_key_id = ${R('aws_access_key_id')}`,
      ['aws_access_key_id'],
    ],
    [
      'an AWS secret key in an ini file',
      `aws_secret_access_key = ${awsSecret}\n`,
      `aws_secret_access_key = ${R('aws_secret_access_key')}\n`,
      ['aws_secret_access_key'],
    ],
    [
      'an AWS secret key in env style',
      `AWS_SECRET_ACCESS_KEY=${awsSecret}`,
      `AWS_SECRET_ACCESS_KEY=${R('aws_secret_access_key')}`,
      ['aws_secret_access_key'],
    ],
    [
      'an AWS secret key in JSON',
      `{"SecretAccessKey": "${awsSecret}"}`,
      `{"SecretAccessKey": "${R('aws_secret_access_key')}"}`,
      ['aws_secret_access_key'],
    ],
    [
      'a GitHub classic token',
      `git clone https://${githubPat}@github.com/o/r`,
      `git clone https://${R('github_token')}@github.com/o/r`,
      ['github_token'],
    ],
    ['a GitHub OAuth token', `token ${githubOauth}`, `token ${R('github_token')}`, ['github_token']],
    ['a GitHub fine-grained token', `GH=${githubFineGrained}`, `GH=${R('github_token')}`, ['github_token']],
    ['a Slack bot token', `slack: ${slackBot}`, `slack: ${R('slack_token')}`, ['slack_token']],
    ['a Google API key', `maps?key=${googleKey}&q=x`, `maps?key=${R('google_api_key')}&q=x`, ['google_api_key']],
    ['a Stripe live key', `stripe.setKey('${stripeLive}')`, `stripe.setKey('${R('stripe_key')}')`, ['stripe_key']],
    ['a Stripe restricted key', stripeRestricted, R('stripe_key'), ['stripe_key']],
    ['a JWT', `session=${jwt}; Path=/`, `session=${R('jwt')}; Path=/`, ['jwt']],
    [
      'an Authorization Bearer header',
      `Authorization: Bearer ${bearer}`,
      `Authorization: Bearer ${R('bearer_token')}`,
      ['bearer_token'],
    ],
    [
      'a lowercase bearer header',
      `authorization: bearer ${bearer}`,
      `authorization: bearer ${R('bearer_token')}`,
      ['bearer_token'],
    ],
    [
      'a Bearer JWT, named as a JWT',
      `-H "Authorization: Bearer ${jwt}"`,
      `-H "Authorization: Bearer ${R('jwt')}"`,
      ['jwt'],
    ],
    [
      'Basic auth',
      'Authorization: Basic dXNlcjpwYXNzd29yZA==',
      `Authorization: Basic ${R('basic_auth')}`,
      ['basic_auth'],
    ],
    [
      'an RSA private key block',
      `key:\n-----BEGIN RSA PRIVATE KEY-----\n${pemBody}\n-----END RSA PRIVATE KEY-----\nnext`,
      `key:\n${R('private_key')}\nnext`,
      ['private_key'],
    ],
    [
      'an OpenSSH private key block with CRLF',
      `-----BEGIN OPENSSH PRIVATE KEY-----\r\n${pemBody}\r\n-----END OPENSSH PRIVATE KEY-----`,
      R('private_key'),
      ['private_key'],
    ],
    ['a truncated private key', `-----BEGIN PRIVATE KEY-----\n${pemBody}`, R('private_key'), ['private_key']],
    [
      'a password in a database URL, keeping user and host',
      'DATABASE_URL=postgres://keel:s3cr3t-P%40ss@db.internal:5432/keel',
      `DATABASE_URL=postgres://keel:${R('url_password')}@db.internal:5432/keel`,
      ['url_password'],
    ],
    [
      'a password with no user',
      'redis://:hunter2pass@cache:6379/0',
      `redis://:${R('url_password')}@cache:6379/0`,
      ['url_password'],
    ],
    [
      'api_key in a query string',
      'https://api.example.com/v1/items?api_key=abc123def456&page=2',
      `https://api.example.com/v1/items?api_key=${R('secret_assignment')}&page=2`,
      ['secret_assignment'],
    ],
    [
      'an env-style password line',
      'DB_PASSWORD=correct-horse-battery\nDB_HOST=db',
      `DB_PASSWORD=${R('secret_assignment')}\nDB_HOST=db`,
      ['secret_assignment'],
    ],
    [
      'a quoted client secret',
      'client_secret="q8s7 d6f5"',
      `client_secret="${R('secret_assignment')}"`,
      ['secret_assignment'],
    ],
    [
      'secret= and token= together',
      'SECRET=abc&access_token=xyz123',
      `SECRET=${R('secret_assignment')}&access_token=${R('secret_assignment')}`,
      ['secret_assignment'],
    ],
  ];

  it.each(samples)('redacts %s', (_label, input, expected, kinds) => {
    const result = redactSecrets(input);
    expect(result.value).toBe(expected);
    expect(result.redactions.map((r) => r.kind)).toEqual(kinds);
  });

  it('lets an import skip a JSON line only when none of its strings could hold a secret, however the line spells them', () => {
    // Every character as a \u escape: the spelling a prefix scan of the text cannot see.
    const escapeAll = (text: string) =>
      [...text].map((c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`).join('');
    for (const [, input] of samples) {
      const line = JSON.stringify({
        type: 'message',
        message: { role: 'user', content: [{ type: 'text', text: input }] },
      });
      expect(jsonTextMayHoldSecret(line)).toBe(true);
      expect(jsonTextMayHoldSecret(`{"text":"${escapeAll(input)}"}`)).toBe(true);
      expect(redactSecrets(JSON.parse(`{"text":"${escapeAll(input)}"}`)).redactions.length).toBeGreaterThan(0);
    }
    // A slash escaped as JSON may escape it: https:\/\/user:pass@host.
    expect(jsonTextMayHoldSecret('{"text":"see https:\\/\\/admin:hunter2pass@db.example.com"}')).toBe(true);
    expect(
      jsonTextMayHoldSecret(
        JSON.stringify({
          type: 'message',
          message: { role: 'assistant', content: 'The build passed; deploy tomorrow at 9.\nTabs\there.' },
        }),
      ),
    ).toBe(false);
  });

  it('leaves no trace of the secret in the output', () => {
    for (const [, input] of samples) {
      const out = redactSecrets(input).value;
      for (const secret of [
        anthropicKey,
        openaiProjectKey,
        awsSecret,
        githubFineGrained,
        jwt,
        bearer,
        pemBody,
        'hunter2pass',
      ]) {
        if (input.includes(secret)) expect(out).not.toContain(secret);
      }
    }
  });

  const ordinary: Array<[string, string]> = [
    ['prose', 'The quick brown fox jumps over the lazy dog. Then it asked for a password reset.'],
    ['the word token in prose', 'Each token costs money; the tokenizer splits words into tokens.'],
    ['a password reset request', 'Please send me a password reset link for my account.'],
    ['Bearer of bad news', 'I hate to be the Bearer of bad news, but the build failed.'],
    ['bearer with a long word and no digit', 'The bearer instrumentalization of bonds is a finance term.'],
    ['scikit-learn', 'pip install scikit-learn; import sklearn; the sk-learn shorthand'],
    ['short sk- words', 'sk-1 sk-abc sk-ant sk-proj-setup-guide task-sk-12'],
    ['kebab-case names after sk-', 'sk-this-is-a-very-long-kebab-case-name-for-a-css-class'],
    ['a git SHA', 'commit 9fceb02d0ae598e95dc970b74767f19372d61af8 fixes it'],
    ['a UUID', 'session 0b8f3c1e-7d4a-4c2b-9f6e-1a2b3c4d5e6f started'],
    ['a URL without a password', 'see https://user@example.com:8443/path?q=1&page=2#top'],
    ['an ssh URL and scp-style git remote', 'ssh://git@github.com:22/org/repo.git and git@github.com:org/repo.git'],
    ['a URL with a port and an @ in the path', 'http://localhost:8080/users/@ada/profile'],
    ['an email address', 'write to ada.lovelace@example.com'],
    ['file paths', '/home/ada/.ssh/id_rsa.pub C:\\Users\\ada\\secrets\\notes.txt ./src/token.ts'],
    ['code with spaced assignments', 'const token = getToken();\nlet password = readPassword(prompt);'],
    ['token counts', 'max_tokens=4096 input_tokens=1200 token_count=5'],
    ['placeholders', 'token=${TOKEN} password=<your password> api_key={{ key }} secret="${SECRET}"'],
    ['boolean flags named like secrets', '/login?reset_password=true&remember_token=0'],
    ['the working directory variable', 'PWD=/home/ada/project'],
    ['a public certificate', '-----BEGIN CERTIFICATE-----\nMIIBszCCAVmgAwIBAgIUEXAMPLE\n-----END CERTIFICATE-----'],
    ['a public key', '-----BEGIN PUBLIC KEY-----\nMFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAE\n-----END PUBLIC KEY-----'],
    ['a lone JWT-like prefix', 'the header eyJhbGciOiJIUzI1NiJ9 alone is not a token'],
    ['AKIA text that is too short', 'AKIA1234 and AKIAEXAMPLE'],
    ['JSON with secret-like keys', '{"tokens": 123, "password_policy": "min 12 chars", "secret": false}'],
    ['markdown', '# Title\n\n- item with `code` and **bold**\n\n```ts\nconst x = 1;\n```'],
    ['xoxo', 'hugs and kisses, xoxo-gossip-girl'],
    ['an Authorization header with no token', 'Authorization: Bearer'],
    ['base64 image data', `data:image/png;base64,${fake(20_000, BASE64, 42)}==`],
  ];

  it.each(ordinary)('leaves %s untouched', (_label, text) => {
    const result = redactSecrets(text);
    expect(result.value).toBe(text);
    expect(result.redactions).toEqual([]);
  });

  it('walks objects and arrays, counting per kind, and keeps untouched branches as they were', () => {
    const untouched = { role: 'user', content: [{ type: 'text', text: 'hello' }] };
    const input = {
      messages: [
        untouched,
        {
          role: 'toolResult',
          content: [{ type: 'text', text: `export GITHUB_TOKEN=${githubPat}\nexport OTHER=${githubOauth}` }],
        },
      ],
      meta: { url: 'amqp://bot:pw12345678@mq:5672', count: 3, ok: true, none: null },
    };
    const result = redactSecrets(input);
    expect(result.value).not.toBe(input);
    expect(result.value.messages[0]).toBe(untouched);
    expect(result.value.messages[1].content[0].text).toBe(
      `export GITHUB_TOKEN=${R('github_token')}\nexport OTHER=${R('github_token')}`,
    );
    expect(result.value.meta).toEqual({
      url: `amqp://bot:${R('url_password')}@mq:5672`,
      count: 3,
      ok: true,
      none: null,
    });
    expect(result.redactions).toEqual([
      { kind: 'url_password', count: 1 },
      { kind: 'github_token', count: 2 },
    ]);
    expect(input.messages[1].content[0].text).toContain(githubPat);
  });

  it('returns the same object when nothing was redacted', () => {
    const input = { a: ['x', { b: 'plain text here' }], n: 1 };
    const result = redactSecrets(input);
    expect(result.value).toBe(input);
    expect(result.redactions).toEqual([]);
  });

  it('passes through non-string scalars', () => {
    expect(redactSecrets(42).value).toBe(42);
    expect(redactSecrets(null).value).toBeNull();
  });

  it('redacts several kinds in one string and reports them in rule order', () => {
    const text = `Bearer ${bearer} then ${anthropicKey} then ${awsKeyId} then ${anthropicKey}`;
    const result = redactSecrets(text);
    expect(result.value).toBe(
      `Bearer ${R('bearer_token')} then ${R('anthropic_key')} then ${R('aws_access_key_id')} then ${R('anthropic_key')}`,
    );
    expect(result.redactions).toEqual([
      { kind: 'anthropic_key', count: 2 },
      { kind: 'aws_access_key_id', count: 1 },
      { kind: 'bearer_token', count: 1 },
    ]);
  });

  it('is idempotent: redacting redacted text changes nothing', () => {
    const once = redactSecrets(samples.map(([, input]) => input).join('\n')).value;
    const twice = redactSecrets(once);
    expect(twice.value).toBe(once);
    expect(twice.redactions).toEqual([]);
  });

  // Each input targets one rule's worst case. A backtracking regex would not finish here for hours;
  // synchronous code cannot be interrupted, so the suite would hang (and CI time out) rather than fail.
  describe('on 1 MB adversarial input', () => {
    const MB = 1_000_000;
    const fill = (unit: string) => unit.repeat(Math.ceil(MB / unit.length));
    const inputs: Array<[string, string]> = [
      ['one long token run', 'a'.repeat(MB)],
      ['eyJ segments that never reach a dot', fill('eyJ-')],
      ['eyJ followed by a megabyte of token characters', `eyJ${'a'.repeat(MB)}`],
      ['JWT-like dotted segments', fill('eyJabcdef.')],
      ['repeated sk- prefixes', fill('sk-ant-sk-proj-sk-')],
      ['repeated BEGIN lines without END', fill('-----BEGIN PRIVATE KEY-----\n')],
      [
        'BEGIN lines with one END at the very end',
        `${fill('-----BEGIN RSA PRIVATE KEY-----x')}-----END RSA PRIVATE KEY-----`,
      ],
      ['scheme separators', fill('a://')],
      ['a URL user part with no @', `http://u:${'p'.repeat(MB)}`],
      ['repeated assignments', fill('password=')],
      ['nested assignment names', fill('a_b-c.token')],
      ['repeated Bearer words', fill('Bearer ')],
      ['Bearer and letters with no digit', `Bearer ${'x'.repeat(MB)}`],
      ['AWS labels', fill('aws_secret_access_key= ')],
      ['slack prefix and dashes', `xoxb-${'-'.repeat(MB)}`],
      ['whitespace', ' \t\n'.repeat(MB / 3)],
    ];

    it.each(inputs)('finishes on %s', (_label, input) => {
      const result = redactSecrets(input);
      expect(typeof result.value).toBe('string');
    });
  });
});
