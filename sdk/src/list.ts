import type { WithLastResponse } from './request-sender.ts';
import type { PageParams } from './types.ts';

export interface Page<T> {
  data: T[];
  has_more: boolean;
}

export type PageFetcher<T, P extends PageParams> = (params: P) => Promise<WithLastResponse<Page<T>>>;

/**
 * What `list()` returns: await it for one page, or iterate it with `for await` to walk
 * every page (newest first), each fetched when the previous one is used up. Nothing is
 * sent until it is awaited or iterated.
 */
export class ListRequest<T extends { id: string }, P extends PageParams = PageParams>
  implements PromiseLike<WithLastResponse<Page<T>>>, AsyncIterable<T>
{
  private first: Promise<WithLastResponse<Page<T>>> | undefined;

  constructor(
    private readonly fetchPage: PageFetcher<T, P>,
    private readonly params: P,
  ) {}

  then<A = WithLastResponse<Page<T>>, B = never>(
    onFulfilled?: ((page: WithLastResponse<Page<T>>) => A | PromiseLike<A>) | null,
    onRejected?: ((reason: unknown) => B | PromiseLike<B>) | null,
  ): Promise<A | B> {
    return this.firstPage().then(onFulfilled, onRejected);
  }

  catch<B = never>(onRejected?: ((reason: unknown) => B | PromiseLike<B>) | null) {
    return this.firstPage().catch(onRejected);
  }

  finally(onFinally?: (() => void) | null) {
    return this.firstPage().finally(onFinally);
  }

  async *[Symbol.asyncIterator](): AsyncIterator<T> {
    let page = await this.firstPage();
    for (;;) {
      yield* page.data;
      const last = page.data.at(-1);
      if (!page.has_more || last === undefined) return;
      page = await this.fetchPage({ ...this.params, starting_after: last.id });
    }
  }

  private firstPage() {
    this.first ??= this.fetchPage(this.params);
    return this.first;
  }
}
