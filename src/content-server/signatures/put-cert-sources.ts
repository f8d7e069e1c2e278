import { BlockList, isIP } from 'node:net';

/**
 * Where putCert may come from, when a connection names it (`putCertFrom`): SAP's application
 * servers. putCert is unsigned by the protocol; with the list, nobody else can file a certificate.
 * The address is the one the server sees: behind a proxy or an ingress, the proxy's.
 */
export class PutCertSources {
  private readonly list = new BlockList();

  constructor(entries: readonly string[]) {
    for (const entry of entries) {
      const [address, prefix] = entry.split('/');
      const type = isIP(address) === 4 ? 'ipv4' : 'ipv6';
      if (prefix === undefined) this.list.addAddress(address, type);
      else this.list.addSubnet(address, Number(prefix), type);
    }
  }

  /** Whether a request from `remote` may file a certificate; an IPv4 client on a dual-stack socket comes as ::ffff:a.b.c.d. */
  allows(remote: string | undefined): boolean {
    if (remote === undefined) return false;
    const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(remote);
    if (mapped !== null) return this.list.check(mapped[1], 'ipv4');
    return this.list.check(remote, isIP(remote) === 4 ? 'ipv4' : 'ipv6');
  }
}
