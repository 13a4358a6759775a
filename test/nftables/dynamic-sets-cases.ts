/** Sets filled from the packet path, shared by the listing test and its kernel differential. */
export const DYNAMIC_SETS_INPUT: string = [
      'add table ip t',
      'add chain ip t c',
      'add set ip t s { type ipv4_addr ; flags dynamic,timeout ; timeout 10800s ; }',
      'add set ip t s2 { type ipv4_addr ; size 100 ; flags dynamic ; comment "x" ; }',
      'add set ip t s3 { type ipv4_addr ; }',
      'add set ip t unused { type ipv4_addr ; timeout 90s ; }',
      'add rule ip t c ip saddr @s accept',
      'add rule ip t c update @s { ip saddr }',
      'add rule ip t c update @s2 { ip saddr }',
      'add rule ip t c add @s3 { ip daddr }',
      '',
    ].join('\n');
