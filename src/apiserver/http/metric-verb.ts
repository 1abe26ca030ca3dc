// The `verb` label of apiserver_request_total and apiserver_request_duration_seconds, as
// kube-apiserver's endpoints/metrics names it: the HTTP verb in capitals, LIST and WATCH apart from GET,
// and APPLY for a server-side apply patch.
import type { IncomingMessage } from 'node:http';
import { mediaType } from './negotiation.js';
import type { ResourceRequestInfo } from './request-info.js';

export function metricVerb(info: ResourceRequestInfo, req: IncomingMessage): string {
  if (info.verb === 'patch' && mediaType(req.headers['content-type']) === 'application/apply-patch+yaml')
    return 'APPLY';
  switch (info.verb) {
    case 'get':
      return 'GET';
    case 'list':
      return 'LIST';
    case 'watch':
      return 'WATCH';
    case 'create':
      return 'POST';
    case 'update':
      return 'PUT';
    case 'patch':
      return 'PATCH';
    case 'delete':
      return 'DELETE';
    case 'deletecollection':
      return 'DELETECOLLECTION';
  }
}
