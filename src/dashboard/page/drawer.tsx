// A side drawer (the explain panel, the Service view): a dialog with a title and a close button.
import type { ComponentChildren } from 'preact';

export function Drawer(props: {
  readonly label: string;
  readonly title: string;
  readonly onClose: () => void;
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
      <div class="drawer-body">{props.children}</div>
    </div>
  );
}
