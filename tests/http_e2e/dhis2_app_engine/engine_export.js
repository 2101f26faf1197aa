'use strict'
// DHIS2's app data engine, unchanged, against dvexport's HTTP door: the engine an app gets from
// @dhis2/app-service-data's <DataProvider> (its RestAPILink and DataEngine, from
// @dhis2/data-engine), rendered once with react-dom/server to take it out of the React context,
// then asked the queries of the spec as an app's useDataQuery asks them (engine.query).
//
//   node engine_export.js SPEC.json
//
// SPEC: {"baseUrl": "http://127.0.0.1:PORT", "apiVersion": 43, "apiToken": "d2p_..." (or
// absent), "queries": {"name": {"resource": "dataValueSets", "params": {...}}, ...}}.
// Prints one JSON object: {"engine": versions, "results": {"name": {"requests": [{"url",
// "method", "headers"}], "status", "contentType", "data" | "error": {"type", "message",
// "details"}}}}. Each query runs alone (one engine.query each, in order), so that the requests
// recorded are its own. global fetch is wrapped only to record what the engine sent and what
// came back; the response itself goes to the engine untouched.
const fs = require('fs')
const path = require('path')

const spec = JSON.parse(fs.readFileSync(process.argv[2], 'utf8'))

const React = require('react')
const { renderToString } = require('react-dom/server')
const { DataProvider, useDataEngine } = require('@dhis2/app-service-data')
// The module app-service-data itself loads (resolved from its own folder), for the instanceof
// check below.
const dataEngineModule = require(require.resolve('@dhis2/data-engine', {
    paths: [path.dirname(require.resolve('@dhis2/app-service-data'))],
}))

if (typeof globalThis.fetch !== 'function') {
    console.error(`node ${process.version} has no global fetch (node >= 18 has)`)
    process.exit(2)
}

let engine = null
const Capture = () => {
    engine = useDataEngine()
    return null
}
const providerProps = { baseUrl: spec.baseUrl, apiVersion: spec.apiVersion }
if (spec.apiToken) providerProps.apiToken = spec.apiToken
renderToString(
    React.createElement(DataProvider, providerProps, React.createElement(Capture))
)
if (!(engine instanceof dataEngineModule.DataEngine) ||
    !(engine.link instanceof dataEngineModule.RestAPILink)) {
    console.error('DataProvider did not give a DataEngine over a RestAPILink')
    process.exit(2)
}

const realFetch = globalThis.fetch
let current = null
globalThis.fetch = async (url, init) => {
    const headers = {}
    for (const [k, v] of Object.entries((init && init.headers) || {})) headers[k] = v
    current.requests.push({ url: String(url), method: (init && init.method) || 'GET', headers })
    const response = await realFetch(url, init)
    current.status = response.status
    current.contentType = response.headers.get('content-type')
    return response
}

// The version in the package.json above the file "name" resolves to (its "exports" hide it).
const version = name => {
    let dir = path.dirname(require.resolve(name, {
        paths: [path.dirname(require.resolve('@dhis2/app-service-data'))],
    }))
    for (;;) {
        const file = path.join(dir, 'package.json')
        if (fs.existsSync(file)) {
            const json = JSON.parse(fs.readFileSync(file, 'utf8'))
            if (json.name === name) return json.version
        }
        if (path.dirname(dir) === dir) return 'unknown'
        dir = path.dirname(dir)
    }
}

async function main() {
    const out = {
        engine: {
            node: process.version,
            '@dhis2/app-service-data': version('@dhis2/app-service-data'),
            '@dhis2/data-engine': version('@dhis2/data-engine'),
        },
        results: {},
    }
    for (const [name, query] of Object.entries(spec.queries)) {
        current = { requests: [] }
        try {
            const data = await engine.query({ [name]: query })
            current.data = data[name]
        } catch (error) {
            current.error = {
                type: error.type || error.name,
                message: error.message,
                details: error.details instanceof Error ? String(error.details) : error.details,
            }
        }
        out.results[name] = current
    }
    process.stdout.write(JSON.stringify(out))
}

main().catch(error => {
    console.error(error)
    process.exit(2)
})
