/** The price list of the user's group (`/api/user/pricing`), in quota units. */
import { get } from '../api';
import { Card, ErrorLine } from '../components/ui';
import { quota } from '../format';
import { useLoad } from '../load';
import type { PriceList } from '../types';

const pairs = (record: Record<string, number>): string =>
  Object.entries(record)
    .map(([name, price]) => `${name} ${quota(price)}`)
    .join(' · ');

export function PricesPage() {
  const prices = useLoad(() => get<PriceList>('/api/user/pricing'));
  const list = prices.value;
  return (
    <Card title={list ? `Prices for group "${list.group}"` : 'Prices'}>
      <ErrorLine error={prices.error} />
      {list && (
        <>
          <p class="muted">
            Quota units per unit, group ratio {list.group_ratio_permille / 10}% applied. A submit reserves the price of what it asks for; a finished task is
            charged what was delivered; a failed one costs nothing.
          </p>
          <table data-testid="prices-table">
            <thead>
              <tr>
                <th>Model</th>
                <th>Per</th>
                <th class="num">Price</th>
                <th>Tiers</th>
                <th>Extras</th>
              </tr>
            </thead>
            <tbody>
              {list.models.map((m) => (
                <tr key={m.model}>
                  <td>{m.model}</td>
                  <td>{m.unit}</td>
                  <td class="num">{quota(m.price)}</td>
                  <td>{pairs(m.tiers)}</td>
                  <td>{pairs(m.extras)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </>
      )}
    </Card>
  );
}
