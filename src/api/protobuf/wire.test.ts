import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ProtobufError } from './errors.js';
import { enc } from './testing/encode.js';
import { WireReader, toInt32, toInt64 } from './wire.js';

const reader = (bytes: readonly number[]): WireReader => new WireReader(Uint8Array.from(bytes));

const malformed = (fn: () => unknown): void =>
  assert.throws(fn, (err: unknown) => err instanceof ProtobufError && err.reason === 'Malformed');

describe('WireReader', () => {
  it('reads varints of one to ten bytes', () => {
    assert.equal(reader([0x00]).varint(), 0n);
    assert.equal(reader([0x7f]).varint(), 127n);
    assert.equal(reader([0xac, 0x02]).varint(), 300n);
    assert.equal(reader([0xff, 0xff, 0xff, 0xff, 0x0f]).varint(), 0xffffffffn);
    assert.equal(reader([0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x10]).varint(), 2n ** 53n);
    assert.equal(
      reader([0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01]).varint(),
      2n ** 64n - 1n,
    );
  });

  it('turns sign-extended varints into int32 and int64', () => {
    const minusOne = enc().varint(1, -1).finish();
    const r = new WireReader(minusOne);
    r.tag();
    const v = r.varint();
    assert.equal(minusOne.length, 11); // key + ten bytes
    assert.equal(toInt32(v), -1);
    assert.equal(toInt64(v), -1);
    assert.equal(toInt32(BigInt.asUintN(64, -2147483648n)), -2147483648);
    assert.equal(toInt64(2n ** 53n - 1n), Number.MAX_SAFE_INTEGER);
    assert.equal(toInt64(2n ** 53n), undefined);
  });

  it('refuses truncated, overlong and overflowing varints', () => {
    malformed(() => reader([0x80]).varint());
    malformed(() => reader([]).varint());
    malformed(() => reader([0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01]).varint());
    malformed(() => reader([0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02]).varint());
  });

  it('reads tags and refuses field 0 and wire types 6 and 7', () => {
    assert.deepEqual(reader([0x0a]).tag(), { field: 1, wire: 2 });
    assert.deepEqual(reader([0x88, 0x01]).tag(), { field: 17, wire: 0 });
    malformed(() => reader([0x02]).tag());
    malformed(() => reader([0x0e]).tag());
    malformed(() => reader([0x0f]).tag());
  });

  it('reads strings and bytes within bounds', () => {
    const r = new WireReader(enc().string(1, 'héllo').bytes(2, [1, 2, 3]).finish());
    r.tag();
    assert.equal(r.string(), 'héllo');
    r.tag();
    assert.deepEqual([...r.bytes()], [1, 2, 3]);
    assert.equal(r.done, true);
    malformed(() => reader([0x05, 0x61]).string());
    malformed(() => reader([0x02, 0xc3, 0x28]).string()); // invalid UTF-8
  });

  it('bounds a nested message to its length', () => {
    const bytes = enc().message(1, enc().varint(1, 5)).varint(2, 7).finish();
    const r = new WireReader(bytes);
    r.tag();
    const inner = r.message();
    inner.tag();
    assert.equal(inner.varint(), 5n);
    assert.equal(inner.done, true);
    assert.deepEqual(r.tag(), { field: 2, wire: 0 });
  });

  it('skips every non-group wire type and refuses groups', () => {
    const bytes = enc().varint(1, 300).fixed64(2).string(3, 'abc').fixed32(4, 9).varint(5, 1).finish();
    const r = new WireReader(bytes);
    for (let i = 0; i < 4; i++) r.skip(r.tag().wire);
    assert.deepEqual(r.tag(), { field: 5, wire: 0 });
    malformed(() => reader([0x01, 0x02]).skip(1)); // fixed64 cut short
    malformed(() => reader([0x01]).skip(5)); // fixed32 cut short
    malformed(() => reader([]).skip(3));
  });
});
