import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { UsageError } from './flags.js';
import { superEdgeFlags } from './superedge-flags.js';

describe('superEdgeFlags', () => {
  it("takes SuperEdge's DaemonSet command line, leaving the wrapper's own flags", () => {
    const { rest, flags } = superEdgeFlags([
      '--kubeconfig=/var/lib/application-grid-wrapper/kubeconfig.conf',
      '--bind-address=127.0.0.1:51006',
      '--hostname=edge-0',
      '--notify-channel-size=10000',
    ]);
    assert.deepEqual(rest, [
      '--kubeconfig=/var/lib/application-grid-wrapper/kubeconfig.conf',
      '--bind-address=127.0.0.1:51006',
      '--hostname=edge-0',
    ]);
    assert.equal(flags.wrapperInCluster, true);
    assert.equal(flags.notes.length, 1);
    assert.match(flags.notes[0]!, /^--notify-channel-size=10000 has no effect: svcplane bounds each watcher/);
  });

  it("reads Go's boolean forms for --wrapper-in-cluster (default true)", () => {
    const table: [string[], boolean][] = [
      [[], true],
      [['--wrapper-in-cluster'], true],
      [['--wrapper-in-cluster=true'], true],
      [['--wrapper-in-cluster=false'], false],
      [['--wrapper-in-cluster=0'], false],
      [['--wrapper-in-cluster=F'], false],
      [['--wrapper-in-cluster=false', '--wrapper-in-cluster=1'], true],
    ];
    for (const [args, want] of table)
      assert.equal(superEdgeFlags(args).flags.wrapperInCluster, want, args.join(' '));
    // A boolean takes no separate value: the next word is left alone.
    assert.deepEqual(superEdgeFlags(['--wrapper-in-cluster', 'false']).rest, ['false']);
  });

  it('takes a value after a space for the other kinds, as Go does', () => {
    const { rest, flags } = superEdgeFlags(['--kube-qps', '50', '--kube-burst', '100', '--hostname', 'x']);
    assert.deepEqual(rest, ['--hostname', 'x']);
    assert.deepEqual(
      flags.notes.map((n) => n.split(' ')[0]),
      ['--kube-qps=50', '--kube-burst=100'],
    );
  });

  it('accepts --support-endpointslice and --insecure=false, and leaves everything after -- alone', () => {
    const { rest, flags } = superEdgeFlags([
      '--support-endpointslice=true',
      '--insecure=false',
      '--',
      '--debug',
    ]);
    assert.deepEqual(rest, ['--', '--debug']);
    assert.equal(flags.notes.length, 1);
    assert.match(flags.notes[0]!, /EndpointSlices are always served/);
  });

  it('refuses what it cannot honour, and bad values, with the reason', () => {
    const table: [string[], RegExp][] = [
      [
        ['--insecure'],
        /--insecure \(SuperEdge's\) is not supported: .*--insecure-bind-address 127\.0\.0\.1:51006/,
      ],
      [['--insecure=true'], /--insecure-bind-address/],
      [['--debug'], /no pprof/],
      [['--cert-file=/x.pem'], /--cert-file \(SuperEdge's\) is not supported: svcplane generates its CA/],
      [['--ca-file', '/ca.pem'], /--ca-file/],
      [['--notify-channel-size=ten'], /invalid value "ten" for --notify-channel-size: want an integer/],
      [['--notify-channel-size=1.5'], /want an integer/],
      [['--notify-channel-size'], /--notify-channel-size needs a value/],
      [['--kube-qps=fast'], /invalid value "fast" for --kube-qps: want a number/],
      [['--wrapper-in-cluster=maybe'], /invalid value "maybe" for --wrapper-in-cluster: want true or false/],
    ];
    for (const [args, want] of table)
      assert.throws(
        () => superEdgeFlags(args),
        (err: unknown) => err instanceof UsageError && want.test(err.message),
        args.join(' '),
      );
  });

  it('accepts what Go accepts for the flags that change nothing: 0, negatives, an empty path', () => {
    const { rest, flags } = superEdgeFlags([
      '--notify-channel-size=0',
      '--kube-burst=-1',
      '--kube-qps=0',
      '--cert-file=',
      '--ca-file',
      '',
      '--hostname=a=b',
    ]);
    assert.deepEqual(rest, ['--hostname=a=b']);
    assert.equal(flags.notes.length, 3);
  });

  it("leaves flags it does not know to the wrapper's parser", () => {
    assert.deepEqual(superEdgeFlags(['--hostnames=x', '-h', '--proxy-upstream']).rest, [
      '--hostnames=x',
      '-h',
      '--proxy-upstream',
    ]);
  });
});
