declare module 'nuxeo';
