// What a list, watch or deletecollection adds to its authorization attributes (upstream's request info
// with AuthorizeWithSelectors): the parsed fieldSelector, and a metadata.name it requires as the name.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseRequestInfo, selectorAttributes, type ResourceRequestInfo } from './request-info.js';

function attrs(method: string, url: string): ReturnType<typeof selectorAttributes> {
  const [path, q = ''] = url.split('?');
  const query = new URLSearchParams(q);
  const info = parseRequestInfo(method, path!, query) as ResourceRequestInfo;
  return selectorAttributes(info, query);
}

describe('selectorAttributes()', () => {
  const table: [string, string, string, ReturnType<typeof selectorAttributes>][] = [
    ['a list without selector', 'GET', '/api/v1/pods', { name: '' }],
    [
      'a list by node',
      'GET',
      '/api/v1/pods?fieldSelector=spec.nodeName%3Dn1',
      { name: '', fieldSelector: [{ field: 'spec.nodeName', operator: 'Equals', value: 'n1' }] },
    ],
    [
      'a watch by name',
      'GET',
      '/api/v1/nodes?watch=true&fieldSelector=metadata.name%3D%3Dn1',
      { name: 'n1', fieldSelector: [{ field: 'metadata.name', operator: 'DoubleEquals', value: 'n1' }] },
    ],
    [
      'a list excluding a name',
      'GET',
      '/api/v1/nodes?fieldSelector=metadata.name!%3Dn1',
      { name: '', fieldSelector: [{ field: 'metadata.name', operator: 'NotEquals', value: 'n1' }] },
    ],
    [
      'a deletecollection by name keeps no name',
      'DELETE',
      '/api/v1/namespaces/d/pods?fieldSelector=metadata.name%3Dp',
      { name: '', fieldSelector: [{ field: 'metadata.name', operator: 'Equals', value: 'p' }] },
    ],
    [
      'a name that is no path segment',
      'GET',
      '/api/v1/nodes?fieldSelector=metadata.name%3Da%2Fb',
      {
        name: '',
        fieldSelector: [{ field: 'metadata.name', operator: 'Equals', value: 'a/b' }],
      },
    ],
    ['a selector that does not parse', 'GET', '/api/v1/pods?fieldSelector=spec.nodeName', { name: '' }],
    [
      'a get ignores the selector',
      'GET',
      '/api/v1/nodes/n2?fieldSelector=metadata.name%3Dn1',
      { name: 'n2' },
    ],
  ];
  for (const [what, method, url, want] of table) {
    it(what, () => assert.deepEqual(attrs(method, url), want));
  }
});
