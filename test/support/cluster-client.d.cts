export interface ClusterProcess {
  url: string;
  /** Stops the server (fast shutdown) and removes its data. */
  stop(): Promise<void>;
}
export function startClusterProcess(label: string): Promise<ClusterProcess>;
