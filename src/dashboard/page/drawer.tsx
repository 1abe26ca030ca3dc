// A side drawer (the explain panel, the Service view): a dialog with a title, a close button, and what
// it fetched (or why it could not, or that it is still loading).
import type { ComponentChildren } from 'preact';
import type { Fetched } from './use-fetch.js';

export function Drawer(props: {
  readonly label: string;
  readonly title: string;
  readonly onClose: () => void;
  readonly fetched: Fetched<unknown>;
  readonly children: ComponentChildren;
}) {
  return (
    <div class="drawer" role="dialog" aria-label={props.label}>
      <div class="drawer-head">
        <h2>{props.title}</h2>
        <button type="button" class="close" aria-label="close" onClick={props.onClose}>
          ×
        </button>
      </div>
      <div class="drawer-body">
        {props.fetched.error && <p class="error">{props.fetched.error}</p>}
        {!props.fetched.data && !props.fetched.error && <p>loading…</p>}
        {props.children}
      </div>
    </div>
  );
}
