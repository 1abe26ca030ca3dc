// A watch request: its options (resourceVersion, sendInitialEvents, bookmarks, timeout) become a
// WatchRequest for watch.ts.
import { statusErrors } from '../../api/status.js';
import { listOptionsInvalid, parseResourceVersion } from '../registry/lister.js';
import { queryTrue } from './request-info.js';
import { parseIncludeObject } from './table.js';
import { serveWatch, type WatchRendering } from './watch.js';
import { notFoundPath, type ResourceHandler } from './types.js';
import { scopeCheck, filterFrom, renderingFor } from './request-options.js';

const MAX_TIMER_MS = 2 ** 31 - 1;

export const serveResourceWatch: ResourceHandler = async (deps, req, res, r, info, query) => {
  scopeCheck(r, info);
  if (info.name !== '') throw notFoundPath();
  const rendering = renderingFor(req);
  const filter = filterFrom(r, info.namespace, query);
  const rvRaw = query.get('resourceVersion') ?? '';
  const rv = parseResourceVersion(rvRaw);
  const rvm = query.get('resourceVersionMatch') ?? '';
  const sie = query.get('sendInitialEvents');
  const bookmarks = queryTrue(query.get('allowWatchBookmarks'));
  const sendInitial = queryTrue(sie);
  if (sie !== null) {
    if (rvm !== 'NotOlderThan') {
      throw listOptionsInvalid(
        'resourceVersionMatch',
        'sendInitialEvents requires setting resourceVersionMatch to NotOlderThan',
      );
    }
    if (sendInitial && !bookmarks) {
      throw listOptionsInvalid(
        'allowWatchBookmarks',
        'sendInitialEvents requires setting allowWatchBookmarks to true',
      );
    }
  } else if (rvm !== '') {
    throw listOptionsInvalid(
      'resourceVersionMatch',
      'resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided',
    );
  }
  const timeoutRaw = query.get('timeoutSeconds');
  let timeoutMs: number;
  if (timeoutRaw !== null && timeoutRaw !== '') {
    const n = Number(timeoutRaw);
    if (!Number.isInteger(n) || n < 0)
      throw statusErrors.badRequest(`invalid timeoutSeconds ${JSON.stringify(timeoutRaw)}`);
    // A timer holds at most 2^31-1 ms (~24.8 days); beyond, Node would fire it at once.
    timeoutMs = n === 0 ? deps.minRequestTimeoutSeconds * 1000 : Math.min(n * 1000, MAX_TIMER_MS);
  } else {
    timeoutMs = deps.minRequestTimeoutSeconds * 1000 * (1 + Math.random());
  }
  const watchRendering: WatchRendering =
    rendering.kind === 'table'
      ? { kind: 'table', version: rendering.version, include: parseIncludeObject(query.get('includeObject')) }
      : rendering.kind === 'metadata'
        ? { kind: 'metadata', version: rendering.version }
        : { kind: 'json' };
  let start: Parameters<typeof serveWatch>[1]['start'];
  if (sendInitial) {
    const fresh = rv === undefined || rv === 0 ? await deps.registry.store.currentRevision() : rv;
    start = {
      kind: 'initial',
      freshRevision: rv === 0 ? deps.cache.revision : fresh,
      initialEventsEnd: true,
    };
  } else if (rv === undefined) {
    start = {
      kind: 'initial',
      freshRevision: await deps.registry.store.currentRevision(),
      initialEventsEnd: false,
    };
  } else if (rv === 0) {
    start = { kind: 'initial', initialEventsEnd: false };
  } else {
    start = { kind: 'from', revision: rv };
  }
  await serveWatch(
    res,
    { resource: r, filter, rendering: watchRendering, start, bookmarks, timeoutMs },
    {
      cache: deps.cache,
      metrics: deps.metrics,
      bookmarkIntervalMs: deps.bookmarkIntervalMs,
      maxQueuedBytes: deps.maxWatchQueueBytes,
      now: () => deps.registry.now(),
    },
    deps.watches,
  );
};
