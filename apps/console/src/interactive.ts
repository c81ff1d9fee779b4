/**
 * The moment the first page can be used — the sign-in form shown, or a page's data shown — recorded once as the
 * `console:interactive` performance mark (its startTime counts from the navigation's start). `npm run bench:console`
 * reads it to time the first load.
 */
let marked = false;

export function markInteractive(): void {
  if (marked) return;
  marked = true;
  performance.mark('console:interactive');
}
