import { listenFailureHint } from './listen-address';

/** An error as Node's net module reports a failed system call. */
function systemError(code: string, syscall: string, port?: number): Error {
  return Object.assign(new Error(`${syscall} ${code}`), { code, syscall, port });
}

describe('listenFailureHint', () => {
  it('names the variable to change when the listen itself failed', () => {
    expect(listenFailureHint(systemError('EADDRINUSE', 'listen', 3000))).toMatch(/^set PORT \(or HOST\) to a free/);
    expect(listenFailureHint(systemError('EACCES', 'listen', 80))).toMatch(/^ports below 1024 need privileges/);
    expect(listenFailureHint(systemError('EACCES', 'listen', 8080))).toMatch(/^this user may not listen there/);
  });

  // A directory the user may not write (the embedded database's .data) is no port problem.
  it('says nothing of ports for the same codes from other system calls', () => {
    expect(listenFailureHint(systemError('EACCES', 'mkdir'))).toBeNull();
    expect(listenFailureHint(systemError('EADDRINUSE', 'bind'))).toBeNull();
    expect(listenFailureHint(new Error('anything else'))).toBeNull();
  });
});
