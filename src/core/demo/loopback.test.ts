import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { chooseLoopbackBlocks, parseProcNetTcp, type Listener } from './loopback.js';

// Lines as a little-endian x86_64 kernel prints them (read off this machine, addresses varied).
const TCP = `  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode
   0: 01000A7F:1F90 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 1703049 1 000000000001d289 100 0 0 10 0
   1: 0100007F:A3D7 0100007F:1F90 01 00000000:00000000 00:00000000 00000000     0        0 1703050 1 000000000001d289 20 4 30 10 -1
   2: 00000000:0016 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 11 1 0000000000000000 100 0 0 10 0
   3: garbage
`;
const TCP6 = `  sl  local_address                         remote_address                        st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode
   0: 00000000000000000000000000000000:1F90 00000000000000000000000000000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 1 1 0 100 0 0 10 0
   1: 0000000000000000FFFF00000100157F:2760 00000000000000000000000000000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 2 1 0 100 0 0 10 0
   2: 00000000000000000000000001000000:0050 00000000000000000000000000000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 3 1 0 100 0 0 10 0
`;

describe('parseProcNetTcp', () => {
  it('reads the listening sockets of /proc/net/tcp, in little-endian words', () => {
    assert.deepEqual(parseProcNetTcp(TCP, 4, true), [
      { ip: '127.10.0.1', port: 8080 },
      { ip: '0.0.0.0', port: 22 },
    ]);
  });
  it('reads a big-endian kernel’s words in their order', () => {
    assert.deepEqual(parseProcNetTcp('0: 7F0A0001:1F90 00000000:0000 0A', 4, false), [
      { ip: '127.10.0.1', port: 8080 },
    ]);
  });
  it('reads /proc/net/tcp6: the any address, an IPv4-mapped one as IPv4, and ::1', () => {
    assert.deepEqual(parseProcNetTcp(TCP6, 6, true), [
      { ip: '::', port: 8080 },
      { ip: '127.21.0.1', port: 10080 },
      { ip: '::1', port: 80 },
    ]);
  });
});

describe('chooseLoopbackBlocks', () => {
  const need = { nodes: 3, ports: [8080, 10080], podBlocks: [10, 11, 12], firstStandIn: 20 };
  const at = (ip: string, port = 8080): Listener => ({ ip, port });
  const rows: Array<[string, Listener[], ReturnType<typeof chooseLoopbackBlocks>]> = [
    ['nothing listening: the defaults', [], { pods: 10, standIns: 20 }],
    ['listeners elsewhere do not count', [at('127.0.0.1', 6443), at('10.0.0.1')], { pods: 10, standIns: 20 }],
    [
      "another node's pods in 127.10 (the README's example): the next block",
      [at('127.10.0.1'), at('127.10.1.1')],
      { pods: 11, standIns: 20 },
    ],
    ['any port in a block takes it', [at('127.10.200.3', 9999)], { pods: 11, standIns: 20 }],
    [
      "another demo's stand-ins in 127.21: the three from 127.22 on",
      [at('127.21.88.240', 10080)],
      { pods: 10, standIns: 22 },
    ],
    [
      'every pod block taken',
      [at('127.10.0.1'), at('127.11.0.1'), at('127.12.0.1')],
      { conflict: 'something listens in each of 127.{10,11,12}.0.0/16, where the demo puts its pods' },
    ],
    [
      'a pod port taken on every IPv4 address',
      [at('0.0.0.0')],
      {
        conflict:
          "port 8080 is taken on every address (0.0.0.0:8080), and the demo's pods and proxies listen on it",
      },
    ],
    [
      'a stand-in port taken on every IPv6 (and IPv4) address',
      [at('::', 10080)],
      {
        conflict:
          "port 10080 is taken on every address ([::]:10080), and the demo's pods and proxies listen on it",
      },
    ],
    ['a wildcard on another port does not matter', [at('0.0.0.0', 22)], { pods: 10, standIns: 20 }],
  ];
  for (const [what, listeners, want] of rows) {
    it(what, () => assert.deepEqual(chooseLoopbackBlocks(listeners, need), want));
  }
  it('never gives stand-in blocks that overlap the pod block or run past 127.255', () => {
    assert.deepEqual(chooseLoopbackBlocks([], { ...need, podBlocks: [21], firstStandIn: 20 }), {
      pods: 21,
      standIns: 22,
    });
    const busy = Array.from({ length: 256 - 21 }, (_, i) => at(`127.${21 + i}.0.1`, 1));
    assert.deepEqual(chooseLoopbackBlocks(busy, need), {
      conflict: 'no 3 free /16 blocks of 127.0.0.0/8 from 127.20 up',
    });
  });
});
