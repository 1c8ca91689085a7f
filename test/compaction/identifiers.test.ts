import { extractIdentifiers, type IdentifierPolicy } from '../../src/compaction/identifiers';

describe('extractIdentifiers', () => {
  describe('strict: finds identifiers of every kind', () => {
    it.each<[string, string, string[]]>([
      ['an absolute path', 'Edited /srv/app/config/settings.yaml yesterday', ['/srv/app/config/settings.yaml']],
      ['a home path', 'see ~/projects/keel/notes', ['~/projects/keel/notes']],
      ['a relative path with ./', 'run ./scripts/deploy.sh now', ['./scripts/deploy.sh']],
      ['a bare relative path with a file', 'open src/compaction/plan.ts please', ['src/compaction/plan.ts']],
      ['a Windows path', 'stored in C:\\Users\\ana\\report.docx today', ['C:\\Users\\ana\\report.docx']],
      [
        'a URL, without the sentence period',
        'Docs at https://docs.example.com/a/b?x=1.',
        ['https://docs.example.com/a/b?x=1'],
      ],
      ['a URL inside parentheses', '(see https://example.org/page)', ['https://example.org/page']],
      [
        'a database URL',
        'DATABASE_URL=postgres://keel@db.internal:5432/keel',
        ['postgres://keel@db.internal:5432/keel'],
      ],
      ['a UUID', 'session 3f2b8c1e-9a4d-4e7b-8c2f-1d5e6a7b8c9d failed', ['3f2b8c1e-9a4d-4e7b-8c2f-1d5e6a7b8c9d']],
      ['a short git hash', 'reverted commit 9fceb02 and a1b2c3d4e5f6', ['9fceb02', 'a1b2c3d4e5f6']],
      ['a full sha', 'sha 2fd4e1c67a2d28fced849ee1bb76e7391b93eb12 ok', ['2fd4e1c67a2d28fced849ee1bb76e7391b93eb12']],
      ['a hostname at sentence end', 'It runs on api.example.com.', ['api.example.com']],
      ['an internal three-label hostname', 'ssh into build-01.eu-west.corp now', ['build-01.eu-west.corp']],
      ['localhost', 'it listens on localhost only', ['localhost']],
      ['an IPv4 address', 'ping 10.20.30.40, then stop', ['10.20.30.40']],
      ['an IPv4 host:port', 'connect to 192.168.1.10:8080.', ['192.168.1.10:8080']],
      ['a hostname host:port', 'redis at cache.internal:6379 is down', ['cache.internal:6379']],
      ['localhost:port', 'open localhost:3000', ['localhost:3000']],
      ['an IPv6 address', 'bound to fe80::1ff:fe23:4567:890a now', ['fe80::1ff:fe23:4567:890a']],
      ['IPv6 loopback', 'listen on ::1 please', ['::1']],
      ['a port in context', 'Set the port to 5432 and PORT=8080', ['5432', '8080']],
      ['a file name', 'Update README.md and package.json.', ['README.md', 'package.json']],
      ['a dotfile', 'never commit .env files', ['.env']],
      ['a ticket id', 'Fixes PAY-1234 (see OPS-7).', ['PAY-1234', 'OPS-7']],
      ['a CVE id, whole', 'patched CVE-2024-3094 today', ['CVE-2024-3094']],
      ['an issue reference', 'closes #4512 and keel/core#12', ['#4512', 'keel/core#12']],
      [
        'version numbers',
        'Upgrade to v1.2.3 or v2.0, pin 1.24.0 and 3.0.0-rc.1.',
        ['v1.2.3', 'v2.0', '1.24.0', '3.0.0-rc.1'],
      ],
    ])('%s', (_name, text, expected) => {
      expect(extractIdentifiers(text, 'strict')).toEqual(expected);
    });
  });

  describe('strict: leaves ordinary prose alone', () => {
    it.each<[string, string]>([
      ['sentences and abbreviations', 'We met at noon. Then we left, e.g. to eat, i.e. lunch. Mr. Smith agreed.'],
      ['slashes in prose', 'This is an and/or choice, yes/no, input/output, 1/2 of it.'],
      ['hex-letter words', 'The defaced facade was effaced.'],
      ['plain numbers and dates', 'We had 1234567 rows on 12/03/2026 at 10:30:45.'],
      ['decimals and dotted dates', 'It grew 2.5 times, from 2.0 on 12.03.2026.'],
      ['standards shaped like tickets', 'Use UTF-8 and SHA-256 per ISO-8601.'],
      ['a hash sign without a number', 'the # sign and C# code, issue #1'],
      ['quoted names outside conversation', 'he named it "Project Falcon"'],
      ['C++ scope and clock times', 'Use std::vector at 10:30 today.'],
      ['numbers near a word port without a number', 'The port is closed; we have 3 ports.'],
    ])('%s', (_name, text) => {
      expect(extractIdentifiers(text, 'strict')).toEqual([]);
    });
  });

  describe('quoted names, in conversation only', () => {
    it.each<[string, string, string[]]>([
      [
        'straight and curly quotes',
        'Call it "Project Falcon", not “Blue Harbor”.',
        ['"Project Falcon"', '“Blue Harbor”'],
      ],
      ['not a quoted sentence', 'She said "we should really move all of this to the new cluster soon".', []],
      ['not JSON keys or values', 'the body was {"name": "falcon", "id": 3}', []],
    ])('%s', (_name, text, expected) => {
      expect(extractIdentifiers(text, 'strict', { conversational: true })).toEqual(expected);
    });
  });

  it('lists each identifier once, in order of first appearance', () => {
    expect(extractIdentifiers('/a/b then 10.0.0.1 then /a/b again', 'strict')).toEqual(['/a/b', '10.0.0.1']);
  });

  it('does not list a URL host or a UUID segment separately', () => {
    expect(extractIdentifiers('https://api.example.com/x/3f2b8c1e-9a4d-4e7b-8c2f-1d5e6a7b8c9d', 'strict')).toEqual([
      'https://api.example.com/x/3f2b8c1e-9a4d-4e7b-8c2f-1d5e6a7b8c9d',
    ]);
  });

  it('returns nothing under policy off', () => {
    expect(extractIdentifiers('see /etc/hosts and https://example.com', 'off')).toEqual([]);
  });

  it('custom: protects only the listed kinds and patterns', () => {
    const policy: IdentifierPolicy = { mode: 'custom', kinds: ['url'], patterns: ['TICKET-\\d+'] };
    expect(extractIdentifiers('TICKET-42 at https://x.example.com and /etc/hosts', policy)).toEqual([
      'TICKET-42',
      'https://x.example.com',
    ]);
  });
});
