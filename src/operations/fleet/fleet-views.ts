/** The views of the fleet operations: the console's page of sessions and its charts. */
import { z } from 'zod';
import 'zod-openapi';
import { count } from '../view-fields';
import { sessionListing } from '../sessions/session-views';

/** `GET /v1/console/sessions`: a page of the fleet. */
export const fleetPage = z
  .strictObject({
    sessions: z.array(
      sessionListing
        .extend({
          failedCompactions: count.meta({ description: 'Failed or degraded compactions of the current session id' }),
        })
        .meta({ id: 'FleetSession' }),
    ),
    total: count.meta({ description: 'Sessions the filter matches, on every page' }),
    page: count,
    pageSize: count,
  })
  .meta({ id: 'FleetPage' });

/** A page of the fleet and the number of sessions the filter matches. */
export type FleetPage = z.infer<typeof fleetPage>;

/** `GET /v1/console/overview`: the fleet's charts. */
export const fleetOverview = z
  .strictObject({
    pressure: z
      .array(count)
      .length(10)
      .meta({ description: 'Sessions per tenth of their window: [0] under 10 %, … [9] 90 % and over' }),
    compactionsPerHour: z
      .array(
        z.strictObject({
          hour: z.iso.datetime(),
          total: count,
          failed: count.meta({ description: 'Failed or degraded' }),
        }),
      )
      .meta({ description: 'The last 24 hours, oldest first' }),
  })
  .meta({ id: 'FleetOverview' });

/** The fleet's charts. */
export type FleetOverview = z.infer<typeof fleetOverview>;
