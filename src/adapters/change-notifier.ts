/** In-process wake-up for subscriptions: the event store calls notify() after each commit. */
export interface ChangeNotifier {
  /** Increases on every notify(), so a reader can tell whether it missed one. */
  readonly version: number;
  notify(): void;
  /** Returns the function that removes the listener. */
  listen(listener: () => void): () => void;
}

export function createChangeNotifier(): ChangeNotifier {
  const listeners = new Set<() => void>();
  let version = 0;
  return {
    get version() {
      return version;
    },
    notify() {
      version += 1;
      for (const listener of [...listeners]) listener();
    },
    listen(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
  };
}
