/**
 * Patches a part of the page to new markup in place, instead of replacing it: an element that is
 * still there stays the same node, so keyboard focus, an open audit trail, a half-typed field and
 * the scroll position survive a live update. Children carrying `data-morph` are matched by that
 * key (a row, an incident), others by position; an element with `data-keep` keeps its own
 * attributes and children (what the operator opened).
 */
export function morph(into: Element, html: string): void {
  const t = document.createElement('template');
  t.innerHTML = html;
  morphChildren(into, t.content);
}

const keyOf = (n: Node): string | undefined => (n instanceof Element ? (n.getAttribute('data-morph') ?? undefined) : undefined);

function morphChildren(from: Node, to: Node): void {
  const keyed = new Map<string, Node>();
  for (const c of Array.from(from.childNodes)) {
    const k = keyOf(c);
    if (k !== undefined) keyed.set(k, c);
  }
  const wanted = Array.from(to.childNodes);
  let at: ChildNode | null = from.firstChild;
  for (const next of wanted) {
    const k = keyOf(next);
    let old: Node | undefined;
    if (k !== undefined) old = keyed.get(k);
    else if (at && keyOf(at) === undefined && same(at, next)) old = at;
    if (old && same(old, next)) {
      keyed.delete(k ?? '');
      morphNode(old, next);
      // Only a node out of place moves: moving a node takes the focus out of it.
      if (old !== at) from.insertBefore(old, at);
      else at = at.nextSibling;
    } else {
      from.insertBefore(next, at);
    }
  }
  while (at) {
    const gone: ChildNode = at;
    at = at.nextSibling;
    from.removeChild(gone);
  }
}

function same(a: Node, b: Node): boolean {
  return a.nodeType === b.nodeType && a.nodeName === b.nodeName && keyOf(a) === keyOf(b);
}

function morphNode(old: Node, next: Node): void {
  if (old.nodeType === Node.TEXT_NODE || old.nodeType === Node.COMMENT_NODE) {
    if (old.nodeValue !== next.nodeValue) old.nodeValue = next.nodeValue;
    return;
  }
  if (!(old instanceof Element) || !(next instanceof Element)) return;
  if (old.hasAttribute('data-keep')) return;
  for (const a of Array.from(old.attributes)) if (!next.hasAttribute(a.name)) old.removeAttribute(a.name);
  for (const a of Array.from(next.attributes)) if (old.getAttribute(a.name) !== a.value) old.setAttribute(a.name, a.value);
  // A field the operator is typing in keeps what was typed.
  if (old instanceof HTMLInputElement && old === document.activeElement) return;
  morphChildren(old, next);
}
