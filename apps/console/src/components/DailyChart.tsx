import { useEffect, useRef } from 'react';
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';
import type { DayCounts } from '../api/types';

const SERIES = [
  { key: 'sent', label: 'Sent', stroke: '#2563eb' },
  { key: 'delivered', label: 'Delivered', stroke: '#15803d' },
  { key: 'bounced', label: 'Bounced', stroke: '#b91c1c' },
  { key: 'deferred', label: 'Deferred', stroke: '#b45309' },
] as const;

/** Sent, delivered, bounced and deferred per day (uPlot on a canvas); the same numbers follow as a table. */
export function DailyChart({ days }: { days: DayCounts[] }) {
  const box = useRef<HTMLDivElement>(null);
  useEffect(() => {
    const element = box.current;
    if (!element) return;
    // Each day at noon UTC, so the member's time zone never moves it to the day before.
    const data: uPlot.AlignedData = [
      days.map((day) => Date.parse(`${day.date}T12:00:00Z`) / 1000),
      ...SERIES.map((series) => days.map((day) => day[series.key])),
    ];
    const width = () => Math.max(320, element.clientWidth);
    const chart = new uPlot(
      {
        width: width(),
        height: 260,
        // The legend names the series; the values per day are in the table below (hovering shows no numbers).
        legend: { live: false },
        scales: { x: { time: true }, y: { range: (_u, _min, max) => [0, Math.max(4, max)] } },
        axes: [{}, { values: (_u, ticks) => ticks.map((tick) => (Number.isInteger(tick) ? String(tick) : '')) }],
        series: [
          {
            label: 'Day',
            value: (_u, seconds) => (seconds == null ? '—' : new Date(seconds * 1000).toISOString().slice(0, 10)),
          },
          ...SERIES.map((series) => ({
            label: series.label,
            stroke: series.stroke,
            width: 2,
            points: { show: true, size: 4 },
          })),
        ],
      },
      data,
      element,
    );
    const observer = new ResizeObserver(() => chart.setSize({ width: width(), height: 260 }));
    observer.observe(element);
    return () => {
      observer.disconnect();
      chart.destroy();
    };
  }, [days]);
  return (
    <figure className="chart">
      <div
        ref={box}
        role="img"
        aria-label="Messages per day over the last 30 days: sent, delivered, bounced, deferred"
      />
      <details>
        <summary>The numbers per day</summary>
        <table>
          <caption className="visually-hidden">Messages per day</caption>
          <thead>
            <tr>
              <th scope="col">Day (UTC)</th>
              {SERIES.map((series) => (
                <th scope="col" key={series.key} className="number">
                  {series.label}
                </th>
              ))}
            </tr>
          </thead>
          <tbody>
            {days.map((day) => (
              <tr key={day.date}>
                <td>{day.date}</td>
                {SERIES.map((series) => (
                  <td key={series.key} className="number">
                    {day[series.key]}
                  </td>
                ))}
              </tr>
            ))}
          </tbody>
        </table>
      </details>
    </figure>
  );
}
