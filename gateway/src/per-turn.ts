/**
 * Wraps `fn` so that, however often it is called during one turn of the event loop, it runs at
 * most twice: at the first call (at once), and once more when the turn ends (setImmediate) if it
 * was called again meanwhile. Whatever a call stands for that happened before the end of the turn
 * is covered by one of the two runs, and the first one is not delayed.
 */
export function leadingAndTrailingPerTurn(fn: () => void): () => void {
  let turnOpen = false;
  let again = false;
  return () => {
    if (turnOpen) {
      again = true;
      return;
    }
    fn();
    turnOpen = true;
    setImmediate(() => {
      turnOpen = false;
      if (again) {
        again = false;
        fn();
      }
    });
  };
}
