export interface ClusterProcess {
  url: string;
  /** Stops the server (fast shutdown) and removes its data. */
  stop(): Promise<void>;
  /** Stops and starts the server again on the same data and port. */
  restart(): Promise<void>;
}
export function startClusterProcess(label: string): Promise<ClusterProcess>;
