/** What the notifications module reports at each scrape (see Metrics.useNotificationBacklog). */
export interface NotificationBacklog {
  pending: number;
  /** null when nothing is pending. */
  oldestPendingAgeSeconds: number | null;
}

export type NotificationBacklogSource = () => Promise<NotificationBacklog>;
