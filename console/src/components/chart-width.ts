/**
 * The width a chart has to fill: its container's, followed as it changes (a window resized, a
 * phone turned). Charts draw in that many SVG units, so a bar fills the card and a label stays at
 * its font size whatever the width.
 */
import type { RefObject } from 'preact';
import { useLayoutEffect, useRef, useState } from 'preact/hooks';

/** Narrower than this a chart is not drawn narrower (its card scrolls). */
const MIN_WIDTH = 240;

export function useChartWidth<T extends HTMLElement>(initial = 640): [RefObject<T>, number] {
  const ref = useRef<T>(null);
  const [width, setWidth] = useState(initial);
  useLayoutEffect(() => {
    const element = ref.current;
    if (!element) return;
    const measure = () => setWidth(Math.max(MIN_WIDTH, Math.floor(element.clientWidth)));
    measure();
    const observer = new ResizeObserver(measure);
    observer.observe(element);
    return () => observer.disconnect();
  }, []);
  return [ref, width];
}
